"""API test fixtures: personas (owner app, foreign app, dashboard user, anonymous), slots
(own, foreign, unscoped, missing) and helpers that drive the real URLs through the
whole middleware stack with Django's test ``Client``."""

from __future__ import annotations

import json
import os
import secrets
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse

from summaries.core.turns import TranscriptTurn
from transcripts.core.store import TranscriptStore
from transcripts.models import App, SecurityEvent, Slot
from transcripts.services import app_create, session_append_row, session_create
from transcripts.store import get_store

NO_BODY = object()
SECRET = "ghp_" + "A" * 36  # a GitHub token shape the redactor knows
UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
DENY_FOREIGN = "app does not own this slot"
DENY_UNSCOPED = "app cannot access unscoped slots"


def exchange(i: int) -> tuple[str, str]:
    """The i-th clean exchange: a distinct request and its answer."""
    return (
        f"Please fix bug number {i} in the login flow (ticket LOGIN-{100 + i}).",
        f"Fixed bug {i}: the session cookie was read before it was set. Tests pass.",
    )


def add_exchanges(slot: Slot, count: int, *, start: int = 0) -> list[str]:
    """Append ``count`` user/assistant exchanges; returns the new rows' ts values."""
    stamps: list[str] = []
    for i in range(start, start + count):
        question, answer = exchange(i)
        stamps += session_append_row(key=slot.session.key, role="user", content=question).ts
        stamps += session_append_row(key=slot.session.key, role="assistant", content=answer).ts
    return stamps


def write_config(path: Path, **section: Any) -> None:
    """Replace config.json so that its identity (mtime) visibly changes."""
    try:
        previous = path.stat().st_mtime_ns
    except FileNotFoundError:
        previous = 0
    path.write_text(json.dumps({"session_summary": section}))
    stamp = max(time.time_ns(), previous + 1_000_000)
    os.utime(path, ns=(stamp, stamp))


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

    def persona(self, name: str) -> Persona:
        return {
            "owner": self.owner,
            "foreign": self.foreign,
            "dashboard": self.dashboard,
            "anonymous": self.anonymous,
        }[name]


class CountingBackend:
    """Wraps the real heuristic summarizer and counts the calls that would cost money."""

    def __init__(self) -> None:
        from summaries.core.heuristic import HeuristicBackend

        self.inner = HeuristicBackend()
        self.name = self.inner.name
        self.calls = 0

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        self.calls += 1
        return self.inner.generate(prompt, turns)


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


@pytest.fixture(autouse=True)
def _clean_summary_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's shell must not decide whether a test's summaries are on."""
    for var in (
        "KIROCREW_SUMMARY_ENABLED",
        "KIROCREW_SUMMARY_MIN_USER_TURNS",
        "KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS",
        "KIROCREW_SUMMARY_MAX_INTENTS",
        "KIROCREW_SUMMARY_MAX_CONSTRAINTS",
        "KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def store(kirocrew_home: Path, settings: Any) -> TranscriptStore:
    settings.TRANSCRIPT_FSYNC = "never"
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    settings.DEBUG = False
    return get_store()


@pytest.fixture
def configure(store: TranscriptStore, settings: Any) -> Callable[..., Path]:
    """``configure(enabled=True, min_user_turns=3, …)`` writes the session_summary section."""
    path = Path(settings.KIROCREW_CONFIG_PATH)

    def apply(**section: Any) -> Path:
        write_config(path, **section)
        return path

    return apply


@pytest.fixture
def enabled(configure: Callable[..., Path]) -> Path:
    return configure(enabled=True)


@pytest.fixture
def counting_backend(monkeypatch: pytest.MonkeyPatch) -> CountingBackend:
    backend = CountingBackend()
    monkeypatch.setattr("summaries.services.summary_backend", lambda: backend)
    return backend


def _app_persona(name: str) -> Persona:
    app, token = app_create(name=name)
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {token}")
    return Persona(name=name, client=client, app=app, token=token)


@pytest.fixture
def owner(store: TranscriptStore, db: None) -> Persona:
    return _app_persona("owner-app")


@pytest.fixture
def foreign(store: TranscriptStore, db: None) -> Persona:
    return _app_persona("foreign-app")


@pytest.fixture
def dashboard(store: TranscriptStore, db: None) -> Persona:
    """A logged-in dashboard user whose client enforces CSRF like a browser would."""
    user = get_user_model().objects.create(username="dash")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    secret = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    client.cookies["csrftoken"] = secret
    return Persona(name="dashboard", client=client, csrf=secret)


@pytest.fixture
def anonymous(store: TranscriptStore, db: None) -> Persona:
    return Persona(name="anonymous", client=Client(enforce_csrf_checks=True))


@pytest.fixture
def make_slot(store: TranscriptStore, db: None) -> Callable[..., Slot]:
    """A slot with ``turns`` clean exchanges whose last turn ended with end_turn."""

    def make(name: str, *, app: App | None = None, turns: int = 2, memory_mode: str = "") -> Slot:
        slot = session_create(name=name, memory_mode=memory_mode, app=app)
        add_exchanges(slot, turns)
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")
        slot.refresh_from_db()
        slot.session.refresh_from_db()
        return slot

    return make


@pytest.fixture
def world(
    owner: Persona,
    foreign: Persona,
    dashboard: Persona,
    anonymous: Persona,
    enabled: Path,
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
    return World(owner, foreign, dashboard, anonymous, names, stamps)
