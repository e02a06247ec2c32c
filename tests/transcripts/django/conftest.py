"""Fixtures for the Django side of the transcript store: two apps (the store and the copy of
the sample sessions come from ``tests/fixtures``)."""

from __future__ import annotations

import pytest

from transcripts.models import App
from transcripts.services import app_create


@pytest.fixture
def alice(db) -> App:
    return app_create(name="alice")[0]


@pytest.fixture
def bob(db) -> App:
    return app_create(name="bob")[0]
