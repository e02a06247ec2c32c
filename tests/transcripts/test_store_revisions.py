"""Revisions through the store: one small appended line, checked before it is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.transcripts.helpers import (
    KEY,
    contents,
    json_lines,
    kinds,
    make_store,
    row,
    ts_at,
)
from transcripts.core.errors import (
    RevisionRejected,
    RowNotFound,
    SessionNotFound,
)

# ---------------------------------------------------------------- revisions


def test_revision_appends_one_small_line_and_folds(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    stamps = store.append_rows(
        KEY, [{"role": "assistant", "content": "x" * 10_000} for _ in range(20)]
    ).ts
    size = store.path(KEY).stat().st_size
    result = store.append_revision(KEY, stamps[3], {"cls": "stopped", "meta": {"kind": "stop"}})
    assert store.path(KEY).stat().st_size - size < 200  # O(1) bytes, not O(session)
    record = json_lines(store.path(KEY))[-1]
    assert record == {
        "_type": "revision",
        "target_ts": stamps[3],
        "patch": {"cls": "stopped", "meta": {"kind": "stop"}},
        "ts": result.ts[0],
    }
    assert list(record) == ["_type", "target_ts", "patch", "ts"]
    folded = store.read_file(KEY)
    assert folded.rows[3]["cls"] == "stopped"
    assert kinds(folded) == []


def test_revision_of_a_missing_row_is_row_not_found_and_writes_nothing(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "q")
    before = store.path(KEY).read_bytes()
    with pytest.raises(RowNotFound):
        store.append_revision(KEY, ts_at(12345), {"cls": "x"})
    assert store.path(KEY).read_bytes() == before


def test_revision_target_cannot_be_another_revisions_ts(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    first = store.append_row(KEY, "user", "q").ts[0]
    rev = store.append_revision(KEY, first, {"cls": "x"}).ts[0]
    before = store.path(KEY).read_bytes()
    with pytest.raises(RowNotFound):
        store.append_revision(KEY, rev, {"cls": "y"})
    assert store.path(KEY).read_bytes() == before


def test_revision_target_must_be_a_top_level_row_ts(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "assistant", "a", meta={"ts": ts_at(77)})
    store.append_row(KEY, "assistant", '"ts":"' + ts_at(78) + '"')
    for ts in (ts_at(77), ts_at(78)):
        with pytest.raises(RowNotFound):
            store.append_revision(KEY, ts, {"cls": "x"})


def test_revision_of_a_missing_session_is_session_not_found(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with pytest.raises(SessionNotFound):
        store.append_revision(KEY, ts_at(1), {"cls": "x"})
    assert not store.path(KEY).exists()


@pytest.mark.parametrize(
    "patch",
    [{}, {"ts": ts_at(5)}, {"_type": "metadata"}, {"cls": "x", "ts": ts_at(5)}, {"_after_ts": 5}],
)
def test_revision_writer_refuses_bad_patches_before_writing(
    tmp_path: Path, patch: dict[str, object]
) -> None:
    store = make_store(tmp_path)
    target = store.append_row(KEY, "user", "q").ts[0]
    before = store.path(KEY).read_bytes()
    with pytest.raises(RevisionRejected):
        store.append_revision(KEY, target, patch)
    assert store.path(KEY).read_bytes() == before


def test_position_hint_anchor_must_be_an_existing_row(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    a, b = store.append_rows(KEY, [{"role": "user", "content": c} for c in "ab"]).ts
    with pytest.raises(RowNotFound):
        store.append_revision(KEY, b, {"_after_ts": ts_at(999)})
    store.append_revision(KEY, b, {"_after_ts": ""})
    assert contents(store.read_session(KEY).rows) == ["b", "a"]
    store.append_revision(KEY, b, {"_after_ts": a})
    assert contents(store.read_session(KEY).rows) == ["a", "b"]


def test_revision_of_an_original_system_row(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    target = "2026-01-15T09:00:05+00:00"
    legacy = json.dumps({"_type": "metadata", "created_at": target, "last_consolidated": 0})
    legacy += "\n" + json.dumps(row("user", "legacy", target)) + "\n"
    store.path(KEY).write_text(legacy)
    store.append_revision(KEY, target, {"cls": "seen"})
    assert store.read_session(KEY).rows[0]["cls"] == "seen"
