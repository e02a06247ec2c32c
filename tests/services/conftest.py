"""The services profile against the real servers: PostgreSQL (``DATABASE_URL``, pytest-django
creates and drops ``test_<name>``) and Redis (``REDIS_URL``). Every module here is marked
``services``: the root conftest skips them unless both are configured.

These fixtures refuse to run on anything else: a services test that silently fell back to
SQLite or the in-memory layer would pass while proving nothing. With ``REDIS_URL`` set the
Celery broker is Redis and no worker runs in these tests, so the ones that need a summary
pass ask for ``eager_tasks`` (the e2e suite covers a real worker).
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def on_postgres(db: None) -> None:
    from django.db import connection

    assert connection.vendor == "postgresql", connection.vendor


@pytest.fixture
def services_home(offline_home: Path, summaries_on_via_env: None) -> Path:
    """A private data root; summaries on (one turn is enough) with the offline summarizer,
    whatever the developer's shell says."""
    return offline_home
