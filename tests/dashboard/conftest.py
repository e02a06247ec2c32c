"""Fixtures for the dashboard pages: logged-in users and sessions with rows (the store and
the enabled config come from ``tests/fixtures``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.fixtures.personas import logged_in
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import session_append_row, session_create


@pytest.fixture
def user(db: Any) -> Any:
    return get_user_model().objects.create_user("reader", password="pw-reader-123")


@pytest.fixture
def staff(db: Any) -> Any:
    return get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)


@pytest.fixture
def client_in(user: Any) -> Client:
    return logged_in(user)


@pytest.fixture
def staff_client(staff: Any) -> Client:
    return logged_in(staff, enforce_csrf_checks=True)


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
