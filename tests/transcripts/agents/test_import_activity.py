"""An imported session's last activity is when the agent wrote its newest record, not when
it was imported: a month of old sessions all read "today" and sorted to the top."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, copy_tree
from transcripts.core.timestamps import parse_ts
from transcripts.models import Session
from transcripts.services import agent_import
from transcripts.services.sync import disk_state

pytestmark = pytest.mark.django_db

KEY = f"claude:{CLAUDE_SID}"


def newest_source_ts(store: Any) -> Any:
    """The newest ``source_ts`` among the session's rows: its newest imported record."""
    rows = store.read_session(KEY).rows
    return max(p for p in (parse_ts(r.get("meta", {}).get("source_ts")) for r in rows) if p)


def run(*args: str) -> None:
    call_command("import_transcripts", *args, stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize("bulk", [False, True])
def test_last_activity_is_the_sources_newest_record(
    tmp_path: Path, store: Any, monkeypatch: pytest.MonkeyPatch, bulk: bool
) -> None:
    src = copy_tree(tmp_path / "src", "claude")
    monkeypatch.setattr(agent_import, "PARALLEL_MIN_FILES", 1 if bulk else 10**9)
    source = src / CLAUDE_FILE.removeprefix("claude/")
    run("--format", "claude-code", str(src))
    session = Session.objects.get(key=KEY)
    assert session.last_activity == newest_source_ts(store)
    assert session.last_activity < datetime(2026, 12, 1, tzinfo=UTC)  # the records', not today
    assert session.last_activity == disk_state(KEY).last_activity  # the fold agrees

    # An appended record moves it to that record's time (the cheap append path).
    lines = source.read_text().splitlines()
    later = json.loads(lines[3])
    later.update(uuid="later-1", timestamp="2026-12-01T08:00:00.000Z")
    with source.open("a") as fp:
        fp.write(json.dumps(later) + "\n")
    run("--format", "claude-code", str(src))
    session.refresh_from_db()
    assert session.last_activity == parse_ts("2026-12-01T08:00:00.000Z")
    assert session.last_activity == disk_state(KEY).last_activity
