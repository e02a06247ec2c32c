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
