"""Fixtures for the dashboard pages: a fresh store, logged-in users and sessions with rows."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import session_append_row, session_create
from transcripts.store import get_store


@pytest.fixture(autouse=True)
def _clean_summary_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        if var.startswith("KIROCREW_SUMMARY_"):
            monkeypatch.delenv(var)


@pytest.fixture
def store(kirocrew_home: Path, settings: Any) -> TranscriptStore:
    settings.TRANSCRIPT_FSYNC = "never"
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    return get_store()


def write_config(path: Path, **section: Any) -> None:
    """Replace config.json and make its identity visibly change (the cache keys on it)."""
    try:
        previous = path.stat().st_mtime_ns
    except FileNotFoundError:
        previous = 0
    path.write_text(json.dumps({"session_summary": section}))
    stamp = max(time.time_ns(), previous + 1_000_000)
    os.utime(path, ns=(stamp, stamp))


@pytest.fixture
def summaries_on(kirocrew_home: Path) -> Path:
    path = kirocrew_home / "config.json"
    write_config(path, enabled=True)
    return path


@pytest.fixture
def user(db: Any) -> Any:
    return get_user_model().objects.create_user("reader", password="pw-reader-123")


@pytest.fixture
def staff(db: Any) -> Any:
    return get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)


@pytest.fixture
def client_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def staff_client(staff: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    return client


@pytest.fixture
def make_session(store: TranscriptStore, db: Any) -> Callable[..., Slot]:
    def make(
        name: str, rows: Sequence[tuple[str, Any]] = (), *, title: str = "", app: Any = None
    ) -> Slot:
        slot = session_create(name=name, title=title, app=app)
        for role, content in rows:
            session_append_row(key=slot.session.key, role=role, content=content)
        slot.refresh_from_db()
        slot.session.refresh_from_db()
        return slot

    return make
