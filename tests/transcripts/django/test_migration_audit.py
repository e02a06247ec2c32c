"""Migration 0002 turns the per-denial audit rows of 0001 into aggregates without losing one."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from transcripts.services import security_event_record

BEFORE = [("transcripts", "0001_initial")]
AFTER = [("transcripts", "0002_securityevent_aggregation_rewind_permission")]


@pytest.mark.django_db(transaction=True)
def test_legacy_rows_survive_and_new_ones_aggregate() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("transcripts", "SecurityEvent")
    first = datetime.fromisoformat("2026-11-01T08:00:00+00:00")
    for minute in range(3):  # the same denial three times: three rows before 0002
        old.objects.create(
            caller="app:b",
            operation="slot_read",
            resource="slot=s1",
            created_at=first.replace(minute=minute),
        )

    executor = MigrationExecutor(connection)  # a fresh loader sees the rows' new columns
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("transcripts", "SecurityEvent")
    rows = list(new.objects.order_by("pk"))
    assert [r.fingerprint for r in rows] == [f"legacy:{r.pk}" for r in rows]
    assert [(r.count, r.window_start, r.last_seen_at) for r in rows] == [
        (1, r.created_at, r.created_at) for r in rows
    ]

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest for the rest
    security_event_record(caller="app:b", operation="slot_read", resource="slot=s1")
    security_event_record(caller="app:b", operation="slot_read", resource="slot=s1")
    assert new.objects.count() == 4  # the legacy rows stay apart; the new pair is one row
    assert new.objects.exclude(fingerprint__startswith="legacy:").get().count == 2
