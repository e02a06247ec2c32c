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

    The embedded executor runs passes in worker processes of their own
    (summaries/worker.py), which cannot see the tests' in-memory SQLite database nor a
    ``db`` test's uncommitted rows. The executor's own tests run real servers and
    commands on a file database (tests/e2e/test_summary_dispatch.py, _import.py).
    """
    names = request.fixturenames
    uses_db = {"db", "transactional_db"} & set(names)
    if uses_db or request.node.get_closest_marker("django_db") is not None:
        request.getfixturevalue("settings").KIROCREW_SUMMARY_DISPATCH = "inline"
    return None
