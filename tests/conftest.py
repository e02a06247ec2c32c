"""Shared fixtures. Services-profile tests skip unless their servers are configured."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Fixtures shared across the test packages, registered once here (see tests/fixtures/).
pytest_plugins = [
    "tests.fixtures.store",
    "tests.fixtures.summaries",
    "tests.fixtures.slots",
    "tests.summaries.fake_openai_server",  # the loopback model server (``fake_openai``)
    "tests.summaries.fake_anthropic_server",  # the same, as the Messages API
    "tests.summaries.fake_cli_fixture",  # fake claude / codex executables on PATH
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    have_services = os.environ.get("DATABASE_URL", "").startswith("postgres") and bool(
        os.environ.get("REDIS_URL")
    )
    skip = pytest.mark.skip(reason="services profile: set DATABASE_URL=postgres://… and REDIS_URL")
    for item in items:
        if "services" in item.keywords and not have_services:
            item.add_marker(skip)


@pytest.fixture
def kirocrew_home(tmp_path: Path, settings: object) -> Path:
    """A fresh data root for one test, wired into settings."""
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    settings.KIROCREW_HOME = home  # type: ignore[attr-defined]
    settings.KIROCREW_SESSIONS_DIR = home / "sessions"  # type: ignore[attr-defined]
    settings.KIROCREW_CONFIG_PATH = home / "config.json"  # type: ignore[attr-defined]
    return home


FIXTURES_DIR = Path(__file__).resolve().parent / "data" / "kirocrew-fixtures"


@pytest.fixture(autouse=True)
def _summary_dispatch_inline(request: pytest.FixtureRequest) -> object:
    """Database tests run a turn end's pass inline (``KIROCREW_SUMMARY_DISPATCH``).

    Without a broker the pass runs on the in-process worker thread (summaries/worker.py),
    but the tests' SQLite database is in memory with a shared cache, where a second
    connection writing at the same time fails at once ("database table is locked": no
    busy timeout there, unlike the file database in WAL mode the server uses), and a
    ``db`` test's rows sit in a transaction no other connection can read. Tests of the
    worker path take the ``summary_worker`` fixture; live servers always use it.
    """
    names = request.fixturenames
    uses_db = {"db", "transactional_db"} & set(names)
    if uses_db or request.node.get_closest_marker("django_db") is not None:
        request.getfixturevalue("settings").KIROCREW_SUMMARY_DISPATCH = "inline"
    yield None
    if "summary_worker" in names:
        from summaries.worker import summary_worker_drain

        summary_worker_drain(timeout=60)  # no pass outlives its test's database


@pytest.fixture
def summary_worker(settings: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real embedded path: turn ends queue their pass on the in-process worker (as
    with no broker, even when the services profile names one)."""
    from kirocrew_site.celery import app as celery_app

    settings.KIROCREW_SUMMARY_DISPATCH = "worker"  # type: ignore[attr-defined]
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
