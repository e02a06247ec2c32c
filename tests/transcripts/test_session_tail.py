"""``TranscriptStore.read_session_tail``: the folded rows of a session's last bytes, from the
same chain of files ``read_session`` reads (a summary pass's window of a long session)."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.transcripts.helpers import make_store
from transcripts.core.codec import encode_record
from transcripts.core.store import TranscriptStore
from transcripts.core.storefiles import Identity

KEY = "dashboard_tail"


def rotated(tmp_path: Path) -> TranscriptStore:
    store = make_store(tmp_path / "sessions", max_bytes=4_000, keep_lines=4)
    for i in range(12):
        store.append_rows(
            KEY,
            [
                {"role": "user", "content": f"Please fix bug {i} in the export view."},
                {
                    "role": "assistant",
                    "content": f"Fixed bug {i}. " + "detail " * 40,
                    "meta": {"tool_calls": [{"name": "shell", "output": "x" * 300}], "i": i},
                },
            ],
            metadata={"title": "tail"} if i == 0 else None,
        )
    assert len(store.archive_paths(KEY)) >= 3
    return store


def snapshot(store: TranscriptStore) -> Identity:
    identity = store.identity(KEY)
    assert identity is not None
    return identity


def chain_size(store: TranscriptStore) -> int:
    return sum(p.stat().st_size for p in [*store.archive_paths(KEY), store.path(KEY)])


def test_the_tail_is_the_end_of_the_whole_sessions_rows(tmp_path: Path) -> None:
    store = rotated(tmp_path)
    whole = store.read_session(KEY).rows
    rows = store.read_session_tail(KEY, snapshot(store), chain_size(store) // 2)
    assert rows is not None
    assert 0 < len(rows) < len(whole)
    assert rows == whole[len(whole) - len(rows) :]


def test_a_chain_that_fits_the_budget_is_left_to_the_whole_read(tmp_path: Path) -> None:
    store = rotated(tmp_path)
    assert store.read_session_tail(KEY, snapshot(store), chain_size(store)) is None


def test_rows_appended_after_the_snapshot_are_not_read(tmp_path: Path) -> None:
    store = rotated(tmp_path)
    identity = snapshot(store)
    whole = store.read_session(KEY).rows
    store.append_row(KEY, "user", "landed after the snapshot")
    rows = store.read_session_tail(KEY, identity, chain_size(store) // 2)
    assert rows is not None
    assert rows == whole[len(whole) - len(rows) :]


def test_a_position_hint_in_the_window_is_left_to_the_whole_read(tmp_path: Path) -> None:
    store = rotated(tmp_path)
    stamps = [r["ts"] for r in store.read_file(KEY).rows]
    store.append_revision(KEY, stamps[-1], {"_after_ts": stamps[0]})
    assert store.read_session_tail(KEY, snapshot(store), chain_size(store) - 1) is None


def test_a_set_aside_archive_is_left_out_whatever_precedes_its_header(tmp_path: Path) -> None:
    # A rewind's archive whose header follows a BOM: the fold reads that header (and
    # read_session leaves the archive out); so must the tail.
    store = rotated(tmp_path)
    budget = chain_size(store) - 1  # the session's own files do not fit
    header = {"_type": "archive", "reason": "rewind", "archived_at": "2099-01-01T00:00:00"}
    ghost = {"role": "user", "content": "ghost", "ts": "2099-01-01T00:00:00+00:00"}
    name = f"{store.path(KEY).stem}__20991231-235959.jsonl"
    (store.archive_dir / name).write_bytes(
        b"\xef\xbb\xbf" + encode_record(header) + encode_record(ghost)
    )
    whole = store.read_session(KEY).rows
    assert "ghost" not in orjson.dumps(whole).decode()
    rows = store.read_session_tail(KEY, snapshot(store), budget)
    assert rows is not None
    assert rows == whole[len(whole) - len(rows) :]
