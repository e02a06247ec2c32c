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
def _summary_dispatch_per_transaction_mode(request: pytest.FixtureRequest) -> object:
    """A turn end's pass runs on the in-process worker thread (summaries/worker.py).

    A ``db`` test holds everything in one uncommitted transaction that no other thread's
    connection can read, so there the pass runs inline (``KIROCREW_SUMMARY_DISPATCH``);
    transactional tests take the real path and wait with ``summary_worker_drain()``,
    which also runs after each of them so no pass outlives its test's database.
    """
    marker = request.node.get_closest_marker("django_db")
    names = request.fixturenames
    transactional = (
        "transactional_db" in names
        or "live_server" in names
        or bool(marker is not None and (marker.kwargs.get("transaction") or marker.args[:1]))
    )
    if not transactional:
        if marker is not None or "db" in names:
            request.getfixturevalue("settings").KIROCREW_SUMMARY_DISPATCH = "inline"
        yield None
        return
    yield None
    from summaries.worker import summary_worker_drain

    summary_worker_drain(timeout=60)
