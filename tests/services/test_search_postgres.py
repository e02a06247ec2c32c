"""Search on real PostgreSQL (a generated ``tsvector`` with a GIN index, queried through
``django.contrib.postgres.search``): the same behaviour the embedded profile's FTS5 tests
pin (tests/search/), run again here, plus that the GIN index serves the match."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from tests.fixtures.personas import app_with_client, dashboard_client
from tests.search.conftest import Caller

# The vendor-independent behaviour, collected again under this module's fixtures.
from tests.search.test_search_api import *  # noqa: F403
from tests.search.test_search_dashboard import *  # noqa: F403

pytestmark = [pytest.mark.services]


@pytest.fixture
def apps(
    offline_home: Path, transactional_db: None, on_postgres: None, eager_tasks: None
) -> tuple[Caller, Caller]:
    """As tests/search's, on PostgreSQL; summary passes run inline (no worker here)."""
    _, _, alpha = app_with_client("alpha")
    _, _, beta = app_with_client("beta")
    first, second = Caller(alpha), Caller(beta)
    first.post("/api/chat/slots", {"name": "alpha-1", "title": "Alpha work"})
    second.post("/api/chat/slots", {"name": "beta-1", "title": "Beta work"})
    return first, second


@pytest.fixture
def dashboard(apps: tuple[Caller, Caller]) -> Caller:
    return Caller(dashboard_client())


def test_the_match_is_served_by_the_gin_index(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    alpha.turn("alpha-1", "Index the tapir", "Tapir indexed.")
    with connection.cursor() as cur:
        cur.execute("SET enable_seqscan = off")  # a tiny table: make the planner show its options
        cur.execute(
            "EXPLAIN SELECT id FROM search_searchdoc "
            "WHERE vector @@ plainto_tsquery('english'::regconfig, 'tapir')"
        )
        plan = "\n".join(row[0] for row in cur.fetchall())
        cur.execute("RESET enable_seqscan")
    assert "search_searchdoc_vector_gin" in plan, plan
    assert len(alpha.found("tapir")) == 2
