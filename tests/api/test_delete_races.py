"""A DELETE that lands between a route's slot lookup and its next step answers 404
``slot_not_found`` (never 500, never a misleading 409) and resurrects nothing.

Deterministic: the hook deletes the slot right after ``slot_for_caller`` found it, or
right before a later step of the write (the mirror update, the disk fold), so each
route's mapping is proven without relying on a scheduler. The real race with threads on
PostgreSQL is tests/services/test_delete_races.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.delete_race import ROUTE_IDS, ROUTES, Route, leftovers, send
from transcripts import api as transcripts_api
from transcripts.models import Slot
from transcripts.services import session_delete

from .conftest import Persona, error_of

NAME = "racy"


@pytest.fixture
def racy(owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path) -> Slot:
    return make_slot(NAME, app=owner.app, turns=2)


def stamps_of(owner: Persona) -> list[str]:
    response = owner.call("GET", f"/api/chat/slots/{NAME}/transcript")
    return [row["ts"] for row in json.loads(response.content)["rows"]]


def delete_after_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every route's lookup succeeds, then the slot is deleted before the route goes on."""
    real = transcripts_api.slot_for_caller

    def lookup_then_delete(caller: Any, name: str, *, operation: str) -> Slot:
        found = real(caller, name, operation=operation)
        session_delete(key=found.session.key)
        return found

    for module in ("transcripts.api", "summaries.api"):
        monkeypatch.setattr(f"{module}.slot_for_caller", lookup_then_delete)


def assert_gone(owner: Persona, response: Any) -> None:
    assert response.status_code == 404, response.content
    assert error_of(response) == {"error": "not found", "code": "slot_not_found"}
    assert owner.call("GET", f"/api/chat/slots/{NAME}").status_code == 404
    assert leftovers(NAME) == []


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_a_delete_between_lookup_and_write_is_404_slot_not_found(
    owner: Persona, racy: Slot, monkeypatch: pytest.MonkeyPatch, route: Route
) -> None:
    stamps = stamps_of(owner)
    delete_after_lookup(monkeypatch)

    response = send(owner.client, route, NAME, stamps)

    assert_gone(owner, response)
    assert not Slot.objects.filter(name=f"{NAME}-child").exists()


def test_a_delete_between_the_append_and_its_mirror_is_404_and_resurrects_nothing(
    owner: Persona, racy: Slot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcripts.services.sync import mirror_after_append

    def delete_then_mirror(key: str, *args: Any) -> None:
        session_delete(key=key)
        mirror_after_append(key, *args)

    monkeypatch.setattr("transcripts.services.sessions.mirror_after_append", delete_then_mirror)

    response = owner.call("POST", f"/api/chat/slots/{NAME}/rows", {"role": "user", "content": "x"})

    assert_gone(owner, response)


@pytest.mark.parametrize("route", ["rows", "rewind"])
def test_a_delete_after_the_fold_never_recreates_the_session_row(
    owner: Persona, racy: Slot, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    """The full re-sync folds the file, then the delete lands, then the upsert runs: it must
    not create a ``Session`` row for a transcript that no longer exists."""
    from transcripts.models import Session
    from transcripts.services import sync

    stamps = stamps_of(owner)
    # Force the append's cheap mirror update to miss, so it falls back to the full sync.
    Session.objects.filter(key=racy.session.key).update(gen=99)
    real = sync.disk_state

    def fold_then_delete(key: str, **kwargs: Any) -> Any:
        state = real(key, **kwargs)
        session_delete(key=key)
        return state

    monkeypatch.setattr(sync, "disk_state", fold_then_delete)

    response = send(owner.client, {r.name: r for r in ROUTES}[route], NAME, stamps)

    assert_gone(owner, response)
