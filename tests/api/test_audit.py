"""The denial audit through real requests: probes are counted on aggregate rows (bounded
per caller and window), and a foreign slot costs the same SQL as a missing one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from transcripts.models import SecurityEvent
from transcripts.services import security
from transcripts.services.security import OVERFLOW_RESOURCE, WINDOW, security_event_record

from .conftest import Persona, World, error_of
from .test_matrix import comparable_headers, statements

PROBES = 30


def probe(persona: Persona, name: str) -> Any:
    response = persona.call("GET", f"/api/chat/slots/{name}")
    assert response.status_code == 404, response.content
    assert error_of(response) == {"error": "not found", "code": "slot_not_found"}
    return response


def test_repeated_denials_are_one_row_with_a_count(world: World) -> None:
    for _ in range(PROBES):
        probe(world.foreign, world.slots["own"])
    [event] = SecurityEvent.objects.all()
    assert event.count == PROBES
    assert (event.caller, event.outcome) == ("app:foreign-app", "denied")
    assert event.resource == "slot=own-slot"
    assert event.last_seen_at >= event.created_at


def test_repeated_missing_slot_probes_are_one_row_too(world: World) -> None:
    for _ in range(PROBES):
        probe(world.owner, "no-such-slot")
    [event] = SecurityEvent.objects.all()
    assert (event.outcome, event.error, event.count) == ("not_found", "no such slot", PROBES)


def test_distinct_names_are_capped_per_caller_and_window(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(security, "MAX_ROWS_PER_WINDOW", 5)
    names = [f"guess-{i}" for i in range(40)]
    for name in names:
        probe(world.foreign, name)
    probe(world.owner, "owner-guess")  # another caller has its own allowance

    rows = SecurityEvent.objects.filter(caller="app:foreign-app")
    assert sum(rows.values_list("count", flat=True)) == len(names)  # nothing uncounted
    named = rows.exclude(resource=OVERFLOW_RESOURCE)
    assert sorted(named.values_list("resource", flat=True)) == sorted(
        f"slot={n}" for n in names[:5]
    )
    [overflow] = rows.filter(resource=OVERFLOW_RESOURCE)
    assert overflow.count == len(names) - 5
    assert SecurityEvent.objects.filter(caller="app:owner-app").count() == 1


def test_a_new_window_starts_new_rows(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    start = datetime.fromisoformat("2026-12-01T10:00:00+00:00")
    monkeypatch.setattr(security, "_now", lambda: start)
    probe(world.foreign, "own-slot")
    probe(world.foreign, "own-slot")
    monkeypatch.setattr(security, "_now", lambda: start + WINDOW)
    probe(world.foreign, "own-slot")
    counts = sorted(SecurityEvent.objects.values_list("window_start", "count"))
    assert counts == [(start, 2), (start + WINDOW, 1)]


def test_a_lost_insert_race_counts_on_the_winner(db: None) -> None:
    """Two writers miss the UPDATE and both INSERT: the loser's savepoint rolls back and it
    counts on the row the winner made (the unique fingerprint decides)."""
    fields = {"caller": "app:x", "operation": "slot_read", "outcome": "denied"}
    fields |= {"source": "app_isolation", "resource": "slot=s1", "error": "e"}
    now = security._now()
    window = security._window_start(now)
    security._insert(dict(fields), window, now)
    security._insert(dict(fields), window, now)  # the UPDATE-first path was skipped
    [event] = SecurityEvent.objects.all()
    assert event.count == 2
    security_event_record(**fields)
    assert SecurityEvent.objects.get().count == 3


def test_a_dashboard_users_missing_slot_is_not_recorded(world: World) -> None:
    probe(world.dashboard, "no-such-slot")
    assert not SecurityEvent.objects.exists()


@pytest.mark.parametrize("repeat", [1, 2], ids=["first-probe", "repeated-probe"])
def test_foreign_and_missing_slots_run_the_same_statements(world: World, repeat: int) -> None:
    """The timing oracle: a foreign slot used to add an INSERT a missing one did not."""
    runs: dict[str, tuple[Any, list[str]]] = {}
    for name in (world.slots["own"], "never-created"):
        for _ in range(repeat):  # a repeat takes the UPDATE path: on both names alike
            with CaptureQueriesContext(connection) as captured:
                response = probe(world.foreign, name)
        runs[name] = (response, statements(captured))
    (foreign, foreign_sql), (missing, missing_sql) = runs.values()
    assert foreign_sql == missing_sql
    assert any("transcripts_securityevent" in sql for sql in foreign_sql)
    assert foreign.content == missing.content
    assert comparable_headers(foreign) == comparable_headers(missing)
