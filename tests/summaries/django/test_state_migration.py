"""summaries 0002 + transcripts 0006: the turn mark and the in-flight marker move off the
Slot row into ``SummaryState`` without losing a value, and back again when reversed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("summaries", "0001_initial"), ("transcripts", "0005_session_source_project")]
AFTER = [("summaries", "0002_summarystate"), ("transcripts", "0006_slot_drop_summary_state")]
HELD = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


@pytest.mark.django_db(transaction=True)
def test_marks_and_markers_move_to_summary_state_and_back() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Session, Slot = old.get_model("transcripts", "Session"), old.get_model("transcripts", "Slot")
    marks = {"marked": (3, None), "in-flight": (0, HELD), "both": (5, HELD), "plain": (0, None)}
    for name, (mark, until) in marks.items():
        session = Session.objects.create(key=f"dashboard:{name}", safe_key=f"dashboard_{name}")
        Slot.objects.create(
            name=name, session=session, summary_turn_mark=mark, summary_in_flight_until=until
        )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    State = new.get_model("summaries", "SummaryState")
    moved = {s.slot.name: (s.turn_mark, s.in_flight_until) for s in State.objects.all()}
    assert moved == {name: value for name, value in marks.items() if name != "plain"}
    slot_fields = {f.name for f in new.get_model("transcripts", "Slot")._meta.get_fields()}
    assert not {"summary_turn_mark", "summary_in_flight_until"} & slot_fields

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    back = executor.loader.project_state(BEFORE).apps.get_model("transcripts", "Slot")
    restored = {
        s.name: (s.summary_turn_mark, s.summary_in_flight_until) for s in back.objects.all()
    }
    assert restored == marks

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest for the rest
