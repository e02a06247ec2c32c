"""Who may delete and rewind: apps on their own slots; dashboard users with staff or the
Django permission (``transcripts.delete_session`` / ``transcripts.rewind_session``).
Reads and the other writes stay open to every dashboard login, as in the original."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.fixtures.personas import (
    dashboard_client,
    permitted_client,
    staff_client,
    superuser_client,
)
from transcripts.models import SecurityEvent, Slot

from .conftest import Persona, World, browser_persona, error_of, transcript_bytes

DELETE_PERM = "transcripts.delete_session"
REWIND_PERM = "transcripts.rewind_session"


def user(kind: str) -> Persona:
    """A new logged-in dashboard user of ``kind`` (the world has its own "staff" user)."""
    makers: dict[str, Callable[[], Client]] = {
        "superuser": lambda: superuser_client("root", enforce_csrf_checks=True),
        "staff": lambda: staff_client("staff-2", enforce_csrf_checks=True),
        "plain": lambda: dashboard_client("plain", enforce_csrf_checks=True),
        "may-delete": lambda: permitted_client("deleter", DELETE_PERM, enforce_csrf_checks=True),
        "may-rewind": lambda: permitted_client("rewinder", REWIND_PERM, enforce_csrf_checks=True),
    }
    return browser_persona(kind, makers[kind]())


def delete(persona: Persona, name: str) -> Any:
    return persona.call("DELETE", f"/api/chat/slots/{name}")


def rewind(persona: Persona, world: World, name: str) -> Any:
    after = world.stamps.get(name, ["2026-01-01T00:00:00+00:00"])[0]
    return persona.call("POST", f"/api/chat/slots/{name}/rewind", {"after_ts": after})


ALLOWED = {  # user kind -> the destructive routes it may use
    "superuser": {"delete", "rewind"},
    "staff": {"delete", "rewind"},
    "plain": set(),
    "may-delete": {"delete"},
    "may-rewind": {"rewind"},
}


@pytest.mark.parametrize("kind", list(ALLOWED))
@pytest.mark.parametrize("route", ["delete", "rewind"])
def test_dashboard_users_need_staff_or_the_permission(world: World, kind: str, route: str) -> None:
    persona = user(kind)
    name = world.slots["foreign"]  # any app's slot: a dashboard user is not scoped
    before = transcript_bytes(name)
    response = delete(persona, name) if route == "delete" else rewind(persona, world, name)

    if route in ALLOWED[kind]:
        assert response.status_code == (204 if route == "delete" else 200), response.content
        assert Slot.objects.filter(name=name).exists() == (route != "delete")
        assert transcript_bytes(name) != before
        assert not SecurityEvent.objects.exists()
        return
    assert response.status_code == 403, response.content
    perm = DELETE_PERM if route == "delete" else REWIND_PERM
    assert error_of(response) == {
        "error": f"this action needs a staff account or the {perm} permission",
        "code": "permission_denied",
    }
    assert transcript_bytes(name) == before
    assert Slot.objects.filter(name=name).exists()
    [event] = SecurityEvent.objects.all()
    assert (event.operation, event.outcome) == (f"slot_{route}", "denied")
    assert (event.source, event.error) == ("dashboard_permission", f"needs staff or {perm}")
    assert (event.caller, event.resource) == (
        f"user:{persona.client.session['_auth_user_id']}",
        f"slot={name}",
    )


@pytest.mark.parametrize("route", ["delete", "rewind"])
def test_the_refusal_comes_before_the_lookup(world: World, route: str) -> None:
    """A missing slot gets the same 403 as an existing one: no 404 to tell them apart."""
    plain = user("plain")
    answers = [
        delete(plain, name) if route == "delete" else rewind(plain, world, name)
        for name in (world.slots["own"], "never-created")
    ]
    assert [a.status_code for a in answers] == [403, 403]
    assert answers[0].content == answers[1].content


def test_a_plain_user_still_reads_and_writes_everything_else(world: World) -> None:
    plain = user("plain")
    name = world.slots["foreign"]
    for path in ("", "/transcript", "/summary"):
        assert plain.call("GET", f"/api/chat/slots/{name}{path}").status_code == 200
    renamed = plain.call("PATCH", f"/api/chat/slots/{name}", {"title": "Renamed"})
    assert renamed.status_code == 200
    assert json.loads(renamed.content)["title"] == "Renamed"
    assert plain.call("POST", f"/api/chat/slots/{name}/fork", {}).status_code == 201
    assert plain.call("POST", "/api/chat/slots", {}).status_code == 201


def test_apps_keep_their_own_slot_rights(world: World) -> None:
    own = world.slots["own"]
    assert rewind(world.owner, world, own).status_code == 200
    assert delete(world.owner, own).status_code == 204
    assert not Slot.objects.filter(name=own).exists()
    foreign = world.slots["foreign"]
    assert delete(world.owner, foreign).status_code == 404  # hidden, as ever
    assert Slot.objects.filter(name=foreign).exists()


def test_a_csrf_failure_still_comes_first(world: World) -> None:
    response = user("staff").call("DELETE", f"/api/chat/slots/{world.slots['own']}", csrf=False)
    assert response.status_code == 403
    assert error_of(response)["code"] == "csrf_failed"
    assert Slot.objects.filter(name=world.slots["own"]).exists()
