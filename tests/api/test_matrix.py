"""The whole ownership matrix: every slot route x every caller x every kind of slot.

Anonymous is always 401 (POST included, never a CSRF 403); an app reaches only its own
slots; a denial is byte-identical to the missing-slot 404, runs the same SQL statements
(no timing oracle) and writes exactly one SecurityEvent with the true reason, as does
the app's missing-slot probe; a dashboard user reaches every existing slot, but only
staff (or a granted permission) may delete or rewind: anyone else gets 403.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from transcripts.models import SecurityEvent, Slot

from .conftest import (
    DENY_FOREIGN,
    DENY_UNSCOPED,
    NO_BODY,
    World,
    error_of,
    events,
    transcript_bytes,
)


@dataclass(frozen=True)
class Route:
    id: str
    method: str
    path: str  # "{slot}" and "{ts}" (a row of the addressed slot) are filled in
    body: Any
    success: int

    def url(self, slot: str, ts: str) -> str:
        return "/api/chat/slots/" + self.path.format(slot=slot, ts=ts)


ROUTES = [
    Route("get", "GET", "{slot}", NO_BODY, 200),
    Route("patch", "PATCH", "{slot}", {"title": "Renamed"}, 200),
    Route("delete", "DELETE", "{slot}", NO_BODY, 204),
    Route("turn_start", "POST", "{slot}/turns", {"content": "Next, add a logout button."}, 201),
    Route("row_append", "POST", "{slot}/rows", {"role": "assistant", "content": "On it."}, 201),
    Route("row_revise", "POST", "{slot}/rows/{ts}/revisions", {"patch": {"pinned": True}}, 201),
    Route("turn_end", "POST", "{slot}/turns/end", {"stop_reason": "end_turn"}, 200),
    Route("transcript", "GET", "{slot}/transcript?limit=10", NO_BODY, 200),
    Route("rewind", "POST", "{slot}/rewind", {"after_ts": "{ts}"}, 200),
    Route("fork", "POST", "{slot}/fork", {}, 201),
    Route("summary_get", "GET", "{slot}/summary", NO_BODY, 200),
    Route("summary_post", "POST", "{slot}/summary", NO_BODY, 200),
]
PERSONAS = ["owner", "foreign", "dashboard", "staff", "anonymous"]
SLOTS = ["own", "foreign", "unscoped", "missing"]
MISSING_TS = "2026-01-01T00:00:00.000001+00:00"
DESTRUCTIVE = {"delete", "rewind"}  # need staff or a permission from a dashboard user
NOT_FOUND = "no such slot"  # the error of an app's missing-slot probe event


def expected(persona: str, slot: str, route: Route) -> str:
    """One of: ok, missing (404, no event), forbidden (403, one event), denied:<reason>
    (404, one event; outcome not_found for an app's missing slot), anonymous."""
    if persona == "anonymous":
        return "anonymous"
    if persona == "dashboard" and route.id in DESTRUCTIVE:
        return "forbidden"  # before any lookup: the same 403 for every name
    if persona in ("dashboard", "staff"):
        return "missing" if slot == "missing" else "ok"
    if slot == "missing":
        return "denied:" + NOT_FOUND
    mine = {"owner": "own", "foreign": "foreign"}[persona]
    if slot == mine:
        return "ok"
    return "denied:" + (DENY_UNSCOPED if slot == "unscoped" else DENY_FOREIGN)


def send(world: World, route: Route, persona: str, slot_name: str, ts: str) -> Any:
    body = route.body
    if isinstance(body, dict) and body.get("after_ts") == "{ts}":
        body = {"after_ts": ts}
    return world.persona(persona).call(route.method, route.url(slot_name, ts), body)


def comparable_headers(response: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.items() if k.lower() != "date"}


def statements(captured: CaptureQueriesContext) -> list[str]:
    """The SQL run, literals blanked: what differs between two names and two clocks."""
    blank = [re.sub(r"'(?:[^']|'')*'", "?", q["sql"]) for q in captured.captured_queries]
    unnamed = [re.sub(r'"s\d+_x\d+"', "SP", sql) for sql in blank]  # savepoint ids
    return [re.sub(r"\b\d+(\.\d+)?\b", "N", sql) for sql in unnamed]


def send_counting(world: World, route: Route, persona: str, slot: str, ts: str) -> Any:
    with CaptureQueriesContext(connection) as captured:
        response = send(world, route, persona, slot, ts)
    return response, statements(captured)


@pytest.mark.parametrize("slot", SLOTS)
@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.id)
def test_ownership_matrix(world: World, route: Route, persona: str, slot: str) -> None:
    name = world.slots[slot]
    # A real row of the addressed slot, so a missing ownership check would succeed.
    ts = world.stamps[name][0] if slot != "missing" else MISSING_TS
    before_bytes = transcript_bytes(name)
    before_events = SecurityEvent.objects.count()
    outcome = expected(persona, slot, route)

    response, sql = send_counting(world, route, persona, name, ts)

    if outcome == "anonymous":
        assert response.status_code == 401, response.content
        assert error_of(response)["code"] == "unauthorized"
        assert SecurityEvent.objects.count() == before_events
        assert transcript_bytes(name) == before_bytes
        return

    if outcome == "ok":
        assert response.status_code == route.success, response.content
        if route.success == 204:
            assert response.content == b""
            assert not Slot.objects.filter(name=name).exists()
        else:
            assert response["Content-Type"].startswith("application/json")
            assert "error" not in json.loads(response.content)
        assert SecurityEvent.objects.count() == before_events
        return

    if outcome == "forbidden":
        assert response.status_code == 403, response.content
        assert error_of(response)["code"] == "permission_denied"
        [event] = events()[before_events:]
        assert (event.outcome, event.source) == ("denied", "dashboard_permission")
        assert event.caller.startswith("user:")
        assert transcript_bytes(name) == before_bytes
        assert slot == "missing" or Slot.objects.filter(name=name).exists()
        return

    assert response.status_code == 404, response.content
    assert error_of(response) == {"error": "not found", "code": "slot_not_found"}
    assert not response.has_header("ETag")
    assert not response.has_header("Last-Modified")

    if outcome == "missing":  # a dashboard user: nothing is hidden, nothing to record
        assert SecurityEvent.objects.count() == before_events
        return

    # An app's denial or missing-slot probe: exactly one event with the true reason...
    new = events()[before_events:]
    assert len(new) == 1
    event = new[0]
    assert event.error == outcome.removeprefix("denied:")
    assert event.outcome == ("not_found" if slot == "missing" else "denied")
    assert event.source == "app_isolation"
    assert event.resource == f"slot={name}"
    assert event.count == 1
    assert event.caller == f"app:{world.persona(persona).app.name}"  # type: ignore[union-attr]
    assert transcript_bytes(name) == before_bytes
    assert slot == "missing" or Slot.objects.filter(name=name).exists()
    if slot == "missing":
        return

    # ...and a response byte-identical to a missing slot's, from the same SQL statements.
    missing, missing_sql = send_counting(world, route, persona, "never-created", ts)
    assert SecurityEvent.objects.count() == before_events + 2
    assert missing_sql == sql
    assert missing.status_code == response.status_code
    assert missing.content == response.content
    assert missing["Content-Type"] == response["Content-Type"]
    assert missing["Content-Length"] == response["Content-Length"]
    assert comparable_headers(missing) == comparable_headers(response)


@pytest.mark.parametrize("persona", PERSONAS)
def test_create_slot_by_persona(world: World, persona: str) -> None:
    caller = world.persona(persona)
    response = caller.call("POST", "/api/chat/slots", {"name": f"made-by-{persona}"})
    if persona == "anonymous":
        assert response.status_code == 401
        assert error_of(response)["code"] == "unauthorized"
        assert not Slot.objects.filter(name=f"made-by-{persona}").exists()
        return
    assert response.status_code == 201, response.content
    slot = Slot.objects.get(name=f"made-by-{persona}")
    assert slot.app == caller.app  # an app owns what it creates; a dashboard slot is unscoped
    assert json.loads(response.content)["app"] == (caller.app.name if caller.app else "")


@pytest.mark.parametrize("persona", PERSONAS)
def test_list_slots_by_persona(world: World, persona: str) -> None:
    response = world.persona(persona).call("GET", "/api/chat/slots")
    if persona == "anonymous":
        assert response.status_code == 401
        assert error_of(response)["code"] == "unauthorized"
        return
    assert response.status_code == 200
    names = {slot["name"] for slot in json.loads(response.content)["slots"]}
    visible = {
        "owner": {"own-slot"},
        "foreign": {"foreign-slot"},
        "dashboard": {"own-slot", "foreign-slot", "unscoped-slot"},
        "staff": {"own-slot", "foreign-slot", "unscoped-slot"},
    }[persona]
    assert names == visible
    assert SecurityEvent.objects.count() == 0
