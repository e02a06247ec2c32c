"""API test fixtures: personas (owner app, foreign app, dashboard user, anonymous), slots
(own, foreign, unscoped, missing) and helpers that drive the real URLs through the
whole middleware stack with Django's test ``Client``."""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse

from tests.fixtures.personas import app_with_client, dashboard_client, staff_client
from tests.fixtures.slots import add_exchanges
from transcripts.core.store import TranscriptStore
from transcripts.models import App, SecurityEvent, Slot
from transcripts.runtime import get_store
from transcripts.services import session_create

NO_BODY = object()
SECRET = "ghp_" + "A" * 36  # a GitHub token shape the redactor knows
UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
DENY_FOREIGN = "app does not own this slot"
DENY_UNSCOPED = "app cannot access unscoped slots"


@dataclass
class Persona:
    """One kind of caller with its own ``Client``; ``call`` speaks JSON to a real URL."""

    name: str
    client: Client
    app: App | None = None
    token: str | None = None
    csrf: str | None = None  # a dashboard user's CSRF secret (cookie and header)

    def call(
        self,
        method: str,
        path: str,
        body: Any = NO_BODY,
        *,
        raw: bytes | str | None = None,
        content_type: str = "application/json",
        csrf: bool = True,
        headers: dict[str, str] | None = None,
    ) -> _MonkeyPatchedWSGIResponse:  # an HttpResponse with the test client's extras
        """``body`` is JSON-encoded; ``raw`` is sent as is; ``csrf=False`` omits the token."""
        extra = dict(headers or {})
        if self.csrf and csrf and method.upper() in UNSAFE:
            extra["X-CSRFToken"] = self.csrf
        data: bytes | str = b""
        if raw is not None:
            data = raw
        elif body is not NO_BODY:
            data = json.dumps(body)
        return self.client.generic(
            method.upper(), path, data, content_type=content_type, headers=extra
        )


@dataclass
class World:
    """Everything a matrix case needs: the personas and the slots with their row stamps."""

    owner: Persona
    foreign: Persona
    dashboard: Persona
    anonymous: Persona
    slots: dict[str, str]  # role ("own", "foreign", "unscoped", "missing") -> slot name
    stamps: dict[str, list[str]] = field(default_factory=dict)  # slot name -> row ts
    staff: Persona | None = None  # a staff dashboard user ("dashboard" is not staff)

    def persona(self, name: str) -> Persona:
        personas = {
            "owner": self.owner,
            "foreign": self.foreign,
            "dashboard": self.dashboard,
            "anonymous": self.anonymous,
        }
        if self.staff is not None:
            personas["staff"] = self.staff
        return personas[name]


def events() -> list[SecurityEvent]:
    return list(SecurityEvent.objects.order_by("pk"))


def error_of(response: Any) -> dict[str, Any]:
    """The JSON error envelope of a 4xx/5xx response (asserts its shape)."""
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    data = json.loads(response.content)
    assert isinstance(data, dict)
    assert set(data) == {"error", "code"}, data
    assert isinstance(data["error"], str)
    assert isinstance(data["code"], str)
    return data


def transcript_bytes(name: str) -> bytes | None:
    """The current file of slot ``name``'s transcript (None when it does not exist)."""
    from transcripts.core.keys import transcript_key_for_slot

    path = get_store().path(transcript_key_for_slot(name))
    return path.read_bytes() if path.is_file() else None


def _app_persona(name: str) -> Persona:
    app, token, client = app_with_client(name, enforce_csrf_checks=True)
    return Persona(name=name, client=client, app=app, token=token)


@pytest.fixture
def owner(store: TranscriptStore, db: None) -> Persona:
    return _app_persona("owner-app")


@pytest.fixture
def foreign(store: TranscriptStore, db: None) -> Persona:
    return _app_persona("foreign-app")


def browser_persona(name: str, client: Client) -> Persona:
    """A logged-in user's persona that sends a CSRF token like a browser would."""
    secret = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    client.cookies["csrftoken"] = secret
    return Persona(name=name, client=client, csrf=secret)


@pytest.fixture
def dashboard(store: TranscriptStore, db: None) -> Persona:
    """A logged-in dashboard user (not staff) whose client enforces CSRF like a browser."""
    return browser_persona("dashboard", dashboard_client(enforce_csrf_checks=True))


@pytest.fixture
def staff(store: TranscriptStore, db: None) -> Persona:
    """A logged-in staff user: may also use the destructive routes (delete, rewind)."""
    return browser_persona("staff", staff_client(enforce_csrf_checks=True))


@pytest.fixture
def anonymous(store: TranscriptStore, db: None) -> Persona:
    return Persona(name="anonymous", client=Client(enforce_csrf_checks=True))


@pytest.fixture
def world(
    owner: Persona,
    foreign: Persona,
    dashboard: Persona,
    anonymous: Persona,
    staff: Persona,
    enabled_summaries: Path,
) -> World:
    """Own, foreign and unscoped slots, each with two clean exchanges; summaries on."""
    names = {
        "own": "own-slot",
        "foreign": "foreign-slot",
        "unscoped": "unscoped-slot",
        "missing": "missing-slot",
    }
    stamps: dict[str, list[str]] = {}
    for role, app in (("own", owner.app), ("foreign", foreign.app), ("unscoped", None)):
        slot = session_create(name=names[role], app=app)
        stamps[names[role]] = add_exchanges(slot, 2)
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")
    return World(owner, foreign, dashboard, anonymous, names, stamps, staff=staff)
