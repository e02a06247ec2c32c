"""The services profile against the real servers: PostgreSQL (``DATABASE_URL``, pytest-django
creates and drops ``test_<name>``) and Redis (``REDIS_URL``). Every module here is marked
``services``: the root conftest skips them unless both are configured.

These fixtures refuse to run on anything else: a services test that silently fell back to
SQLite or the in-memory layer would pass while proving nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kirocrew_site.celery import app as celery_app

EAGER = {"task_always_eager": True, "task_eager_propagates": True}


@pytest.fixture
def on_postgres(db: None) -> None:
    from django.db import connection

    assert connection.vendor == "postgresql", connection.vendor


@pytest.fixture
def services_home(kirocrew_home: Path, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private data root; summaries on (one turn is enough) with the offline summarizer,
    whatever the developer's shell says."""
    settings.TRANSCRIPT_FSYNC = "never"
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    for var in (
        "KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS",
        "KIROCREW_SUMMARY_MAX_INTENTS",
        "KIROCREW_SUMMARY_MAX_CONSTRAINTS",
        "KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KIROCREW_SUMMARY_ENABLED", "1")
    monkeypatch.setenv("KIROCREW_SUMMARY_MIN_USER_TURNS", "1")
    return kirocrew_home


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run the Celery summary task inline: with ``REDIS_URL`` set the broker is Redis and
    no worker runs in these tests (the e2e suite covers a real worker)."""
    saved = {name: celery_app.conf[name] for name in EAGER}
    celery_app.conf.update(EAGER)
    yield
    celery_app.conf.update(saved)
