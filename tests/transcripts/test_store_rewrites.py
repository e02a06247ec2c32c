"""The rewrites that keep the session: metadata edits and rewind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.transcripts.helpers import (
    KEY,
    archive_files,
    assert_strictly_increasing,
    contents,
    file_ts,
    fill_session,
    json_lines,
    kinds,
    line,
    line_zero,
    raw_lines,
    row,
    set_mtime_ns,
    ticking_store,
    ts_at,
)
from transcripts.core.codec import MAX_LINE_BYTES
from transcripts.core.errors import RowNotFound, SessionNotFound

ODD_MTIME = 1_767_225_600_123_456_789  # a value no kernel tick would produce by itself


# ---------------------------------------------------------------- metadata edits


def test_set_title_rewrites_only_line_zero_and_keeps_unknown_keys(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 4, future_key={"nested": [1, 2]}, tab_id="t-9")
    store.append_revision(KEY, file_ts(store.path(KEY))[0], {"cls": "x"})
    before = raw_lines(store.path(KEY))
    assert store.update_metadata(KEY, {"title": "New title"}) is True
    after = raw_lines(store.path(KEY))
    assert after[1:] == before[1:]
    meta = json.loads(after[0])
    assert meta["title"] == "New title"
    assert meta["future_key"] == {"nested": [1, 2]}
    assert meta["tab_id"] == "t-9"
    assert {k: v for k, v in meta.items() if k != "title"} == json.loads(before[0])


def test_metadata_edit_restores_the_exact_mtime_and_keeps_gen(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 3)
    set_mtime_ns(store.path(KEY), ODD_MTIME)
    gen = store.identity(KEY).gen  # type: ignore[union-attr]
    store.update_metadata(KEY, {"title": "T"})
    store.update_metadata(KEY, {"pinned": True, "app": "crm"})
    identity = store.identity(KEY)
    assert identity is not None
    assert identity.sig == ODD_MTIME
    assert identity.gen == gen
    assert store.read_metadata(KEY) is not None


def test_metadata_edit_of_a_missing_session_creates_nothing(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    assert store.update_metadata(KEY, {"title": "T"}) is False
    assert not store.path(KEY).exists()


def test_metadata_edit_never_clobbers_a_line_zero_it_cannot_read(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    for first in (b"garbage\n", line(row("user", "q", ts_at(1))), b'{"_type": "metadata", "tit'):
        data = first + line(row("user", "r", ts_at(2)))
        store.path(KEY).write_bytes(data)
        assert store.update_metadata(KEY, {"title": "T"}) is False
        assert store.path(KEY).read_bytes() == data


def test_metadata_edit_of_an_original_system_file_keeps_its_rows_byte_identical(
    tmp_path: Path,
) -> None:
    store = ticking_store(tmp_path)
    meta = {"_type": "metadata", "created_at": ts_at(0), "last_consolidated": 3, "pinned": True}
    body = "".join(json.dumps(row("user", f"é{i}", ts_at(i))) + "\n" for i in range(1, 4))
    store.path(KEY).write_text(json.dumps(meta) + "\n" + body)
    store.update_metadata(KEY, {"title": "T"})
    data = store.path(KEY).read_text()
    assert data.split("\n", 1)[1] == body
    assert json.loads(data.split("\n", 1)[0]) == {**meta, "title": "T"}


def test_metadata_edit_does_not_fence_or_drop_a_torn_tail(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 2)
    with store.path(KEY).open("ab") as fp:
        fp.write(b'{"role":"assi')
    tail = store.path(KEY).read_bytes().split(b"\n", 1)[1]
    store.update_metadata(KEY, {"title": "T"})
    assert store.path(KEY).read_bytes().split(b"\n", 1)[1] == tail


# ---------------------------------------------------------------- rewind


def test_rewind_drops_rows_after_the_ts_archives_them_and_advances_gen(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 6, mystery="kept")
    path = store.path(KEY)
    before = raw_lines(path)
    set_mtime_ns(path, ODD_MTIME)
    assert store.rewind(KEY, stamps[2]) == 3
    after = raw_lines(path)
    assert after[1:] == before[1:4]  # kept rows byte-identical
    meta = json.loads(after[0])
    assert meta["rotation_generation"] == 1
    assert meta["mystery"] == "kept"
    assert contents(store.read_session(KEY).rows) == [f"m{i}:" + "x" * 10 for i in range(3)]
    [archive] = archive_files(store)
    header = line_zero(archive)
    assert header["reason"] == "rewind"
    assert header["count"] == 3
    assert raw_lines(archive)[1:] == before[4:]


def test_rewind_keeps_revisions_of_kept_rows_and_archives_those_of_dropped_rows(
    tmp_path: Path,
) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 4)
    store.append_revision(KEY, stamps[0], {"cls": "kept-rev"})
    store.append_revision(KEY, stamps[3], {"cls": "dropped-rev"})
    store.append_revision(KEY, stamps[1], {"cls": "kept-rev-2"})
    assert store.rewind(KEY, stamps[1]) == 2
    folded = store.read_file(KEY)
    assert [r.get("cls") for r in folded.rows] == ["kept-rev", "kept-rev-2"]
    assert kinds(folded) == []
    assert_strictly_increasing(file_ts(store.path(KEY)))
    archived = json_lines(archive_files(store)[0])[1:]
    assert [a.get("content", a.get("patch")) for a in archived] == [
        "m2:" + "x" * 10,
        "m3:" + "x" * 10,
        {"cls": "dropped-rev"},
    ]


def test_rewind_to_an_unknown_ts_is_row_not_found_and_changes_nothing(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 3)
    rev = store.append_revision(KEY, stamps[0], {"cls": "x"}).ts[0]
    before = store.path(KEY).read_bytes()
    for ts in (ts_at(99999), rev, ""):
        with pytest.raises(RowNotFound):
            store.rewind(KEY, ts)
    assert store.path(KEY).read_bytes() == before
    assert archive_files(store) == []
    with pytest.raises(SessionNotFound):
        store.rewind("dashboard:missing", stamps[0])


def test_rewind_to_the_last_row_changes_nothing(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 3)
    before = store.path(KEY).read_bytes()
    assert store.rewind(KEY, stamps[-1]) == 0
    assert store.path(KEY).read_bytes() == before
    assert store.identity(KEY).gen == 0  # type: ignore[union-attr]
    assert archive_files(store) == []


def test_rewind_archives_are_not_chained_into_the_session(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 5)
    store.rewind(KEY, stamps[1])
    more = store.append_row(KEY, "user", "after rewind").ts
    view = store.read_session(KEY)
    assert contents(view.rows) == ["m0:" + "x" * 10, "m1:" + "x" * 10, "after rewind"]
    assert view.files == [store.path(KEY).name]
    assert_strictly_increasing([*stamps[:2], *more])


def test_rewind_preserves_a_line_it_cannot_read(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 2)
    with store.path(KEY).open("ab") as fp:
        fp.write(b"not json but someone's bytes\n")
    stamps += fill_session(store, 2)
    store.rewind(KEY, stamps[2])
    assert b"not json but someone's bytes" in store.path(KEY).read_bytes()
    store.rewind(KEY, stamps[0])
    assert any(b"not json but someone's bytes" in p.read_bytes() for p in archive_files(store))


def test_rewind_never_destroys_a_line_longer_than_the_store_reads(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 2)
    foreign = line(row("assistant", "L" * (MAX_LINE_BYTES + 1024), ts_at(10**6)))
    with store.path(KEY).open("ab") as fp:
        fp.write(foreign)
    last = store.append_row(KEY, "user", "after").ts[0]
    store.append_row(KEY, "assistant", "dropped")
    store.rewind(KEY, last)
    assert foreign in store.path(KEY).read_bytes()
    store.rewind(KEY, stamps[0])
    assert any(foreign in p.read_bytes() for p in archive_files(store))
