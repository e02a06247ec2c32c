"""The whole ownership matrix: every slot route x every caller x every kind of slot.

Anonymous is always 401 (POST included, never a CSRF 403); an app reaches only its own
slots; a denial is byte-identical to the missing-slot 404 and writes exactly one
SecurityEvent with the true reason; a dashboard user reaches every existing slot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

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
PERSONAS = ["owner", "foreign", "dashboard", "anonymous"]
SLOTS = ["own", "foreign", "unscoped", "missing"]
MISSING_TS = "2026-01-01T00:00:00.000001+00:00"


def expected(persona: str, slot: str) -> str:
    """One of: ok, missing (404, no event), denied:<reason> (404, one event), anonymous."""
    if persona == "anonymous":
        return "anonymous"
    if slot == "missing":
        return "missing"
    if persona == "dashboard":
        return "ok"
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


@pytest.mark.parametrize("slot", SLOTS)
@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.id)
def test_ownership_matrix(world: World, route: Route, persona: str, slot: str) -> None:
    name = world.slots[slot]
    # A real row of the addressed slot, so a missing ownership check would succeed.
    ts = world.stamps[name][0] if slot != "missing" else MISSING_TS
    before_bytes = transcript_bytes(name)
    before_events = SecurityEvent.objects.count()
    outcome = expected(persona, slot)

    response = send(world, route, persona, name, ts)

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

    assert response.status_code == 404, response.content
    assert error_of(response) == {"error": "not found", "code": "slot_not_found"}
    assert not response.has_header("ETag")
    assert not response.has_header("Last-Modified")

    if outcome == "missing":
        assert SecurityEvent.objects.count() == before_events
        return

    # Denied: exactly one event with the true reason, nothing touched...
    new = events()[before_events:]
    assert len(new) == 1
    event = new[0]
    assert event.error == outcome.removeprefix("denied:")
    assert event.outcome == "denied"
    assert event.source == "app_isolation"
    assert event.resource == f"slot={name}"
    assert event.caller == f"app:{world.persona(persona).app.name}"  # type: ignore[union-attr]
    assert transcript_bytes(name) == before_bytes
    assert Slot.objects.filter(name=name).exists()

    # ...and a response byte-identical to the missing slot's (which writes no event).
    missing = send(world, route, persona, world.slots["missing"], ts)
    assert SecurityEvent.objects.count() == before_events + 1
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
    }[persona]
    assert names == visible
    assert SecurityEvent.objects.count() == 0
