"""A hostile folder handed to the bulk first import (enough new files for the worker
processes): links, a FIFO, junk, an oversized file and a torn last line sit among the good
sessions. Nothing hangs, nothing outside the folder is read, every bad file is reported,
the good ones are imported, and the torn line waits for the next run and lands once."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID
from tests.transcripts.test_agent_import_bulk import make_tree
from transcripts.core.store import TranscriptStore
from transcripts.models import Session
from transcripts.services import agent_import
from transcripts.services.agent_import import agent_import_paths

pytestmark = pytest.mark.django_db

OUTSIDE_SECRET = "only-outside-the-folder-" + "q7" * 10


def _claude_session(template: str, sid: str) -> str:
    return template.replace(CLAUDE_SID, sid)


def _assistant_end(sid: str, text: str) -> str:
    record = {
        "type": "assistant",
        "sessionId": sid,
        "uuid": f"late-{sid}",
        "message": {
            "id": f"msg_late_{sid}",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
        },
    }
    return json.dumps(record)


def _by_file(result: Any) -> dict[str, Any]:
    return {Path(o.file).name: o for o in result.outcomes}


def test_a_hostile_folder_neither_hangs_nor_leaks_and_reports_each_bad_file(
    tmp_path: Path, store: TranscriptStore, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bulk_runs: list[int] = []
    real_bulk = agent_import.prepared_in_workers

    def counted(files: list[Path], *args: Any) -> Any:
        bulk_runs.append(len(files))
        return real_bulk(files, *args)

    monkeypatch.setattr(agent_import, "prepared_in_workers", counted)
    src = make_tree(tmp_path / "src")
    project = (src / CLAUDE_FILE).parent
    template = (src / CLAUDE_FILE).read_text()

    outside = tmp_path / "elsewhere.jsonl"  # a session the person never pointed us at
    outside_sid = str(uuid.UUID(int=900))
    outside.write_text(
        _claude_session(template, outside_sid) + _assistant_end(outside_sid, OUTSIDE_SECRET) + "\n"
    )
    (project / "link.jsonl").symlink_to(outside)
    os.mkfifo(project / "fifo.jsonl")  # opening it for reading would block forever
    (project / "junk.jsonl").write_text('this is not json\n{"neither": \n')
    big = project / f"{uuid.UUID(int=901)}.jsonl"
    big.write_text(_claude_session(template, str(uuid.UUID(int=901))) * 40)
    settings.KIROCREW_IMPORT_MAX_BYTES = big.stat().st_size - 1
    torn_sid = str(uuid.UUID(int=902))
    torn = project / f"{torn_sid}.jsonl"
    late = _assistant_end(torn_sid, "The late reply that was still being written.")
    torn.write_text(_claude_session(template, torn_sid) + late[:40])  # no newline: torn

    result = agent_import_paths(paths=[src], fmt="auto")

    assert bulk_runs  # the worker processes read the new sources
    assert bulk_runs[0] >= agent_import.PARALLEL_MIN_FILES
    seen = _by_file(result)
    assert seen["link.jsonl"].status == "bad"
    assert "not a regular file" in seen["link.jsonl"].reason
    assert seen["fifo.jsonl"].status == "bad"
    assert "not a regular file" in seen["fifo.jsonl"].reason
    assert seen["junk.jsonl"].status == "bad"
    assert seen[big.name].status == "bad"
    assert seen[torn.name].status == "imported"
    good = [o for o in result.outcomes if o.status == "imported"]
    assert len(good) >= agent_import.PARALLEL_MIN_FILES
    on_disk = b"".join(p.read_bytes() for p in store.keys_on_disk())
    assert OUTSIDE_SECRET.encode() not in on_disk  # the link's target was never read
    assert b"The late reply" not in on_disk  # the torn line waits
    assert Session.objects.count() == len(good)

    # The agent finishes writing the line: the next run imports it, exactly once.
    torn_key = seen[torn.name].key
    before = Session.objects.get(key=torn_key).row_count
    with torn.open("a") as fh:
        fh.write(late[40:] + "\n")
    again = _by_file(agent_import_paths(paths=[src], fmt="auto"))
    assert again[torn.name].status == "imported"
    assert Session.objects.get(key=torn_key).row_count == before + 1
    text = store.path(torn_key).read_bytes()
    assert text.count(b"The late reply that was still being written.") == 1
    third = _by_file(agent_import_paths(paths=[src], fmt="auto"))
    assert third[torn.name].status == "unchanged"
