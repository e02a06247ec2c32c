"""Fixtures for the Django side of the transcript store: a fresh store, apps, fixture copies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_DIR
from transcripts.core.store import TranscriptStore
from transcripts.models import App
from transcripts.services import app_create
from transcripts.store import get_store


@pytest.fixture
def store(kirocrew_home: Path, settings) -> TranscriptStore:
    settings.TRANSCRIPT_FSYNC = "never"
    return get_store()


@pytest.fixture
def alice(db) -> App:
    return app_create(name="alice")[0]


@pytest.fixture
def bob(db) -> App:
    return app_create(name="bob")[0]


@pytest.fixture
def fixture_tree(tmp_path: Path) -> Path:
    """A private copy of the original system's sample sessions directory."""
    target = tmp_path / "import-src"
    shutil.copytree(FIXTURES_DIR, target)
    (target / "README.md").unlink()
    return target
