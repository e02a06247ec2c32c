"""Row-changing record kinds are declared once (``codec.ROW_CHANGES``) and every path sees them.

A dummy kind, ``retitle`` (``{"_type": "retitle", "target_ts", "title", "ts"}``: sets the
target row's ``title``), is declared for each test. Each path that must notice a
row-changing record is then checked against it: the fold, the tail read of a long
session (a summary pass's window), the page reader (offset index), rotation and rewind. A path that hard-codes
``"revision"`` again reads the dummy record as something else and fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.transcripts.helpers import KEY, fold_data, json_lines, ticking_store
from transcripts.core import codec
from transcripts.core.codec import encode_record
from transcripts.core.paging import read_page
from transcripts.core.store import TranscriptStore

KIND = "retitle"


@pytest.fixture(autouse=True)
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(codec.ROW_CHANGES, KIND, lambda record: {"title": record.get("title")})


def retitle(target_ts: str, title: str) -> dict[str, Any]:
    return {"_type": KIND, "target_ts": target_ts, "title": title, "ts": None}


def session(tmp_path: Path, n: int = 6) -> tuple[TranscriptStore, list[str]]:
    store = ticking_store(tmp_path)
    stamps = [store.append_row(KEY, "user", f"row {i}").ts[0] for i in range(n)]
    return store, stamps


def append(store: TranscriptStore, *records: dict[str, Any]) -> None:
    """Records the store has no public writer for, stamped and appended as it appends."""
    with store.locked(KEY):
        store._append_locked(KEY, list(records), None)


def titles(rows: list[dict[str, Any]]) -> list[Any]:
    return [row.get("title") for row in rows]


def test_undeclared_the_kind_is_a_stray_record(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the declaration changes: without it the fold neither applies nor counts it.
    monkeypatch.delitem(codec.ROW_CHANGES, KIND)
    data = b'{"role":"user","content":"a","ts":"t1"}\n' + encode_record(
        {**retitle("t1", "T"), "ts": "t2"}
    )
    folded = fold_data(data)
    assert titles(folded.rows) == [None]
    assert folded.report.revisions == 0
    assert folded.report.counts() == {"stray_record": 1}


def test_the_fold_applies_a_declared_kind_and_reports_an_orphan() -> None:
    lines = [
        {"role": "user", "content": "a", "ts": "2026-03-01T12:00:00.000001+00:00"},
        {"role": "user", "content": "b", "ts": "2026-03-01T12:00:00.000002+00:00"},
        {**retitle("2026-03-01T12:00:00.000001+00:00", "T"), "ts": "2026-03-01T12:00:01+00:00"},
        {**retitle("no such row", "X"), "ts": "2026-03-01T12:00:02+00:00"},
    ]
    folded = fold_data(b"".join(encode_record(line) for line in lines))
    assert titles(folded.rows) == ["T", None]
    assert folded.report.revisions == 2
    assert folded.report.counts() == {"orphan_revision": 1}


def test_the_tail_read_applies_a_declared_kind(tmp_path: Path) -> None:
    store, stamps = session(tmp_path)
    append(store, retitle(stamps[4], "T"))
    budget = store.path(KEY).stat().st_size - 1  # all but line 0's first byte
    identity = store.identity(KEY)
    assert identity is not None
    rows = store.read_session_tail(KEY, identity, budget)
    assert rows is not None
    assert titles(rows) == [None, None, None, None, "T", None]
    assert rows == store.read_session(KEY).rows


def test_the_tail_read_applies_a_declared_kind_in_an_archive(tmp_path: Path) -> None:
    store, _ = session(tmp_path)
    header = {"_type": "archive", "reason": "rotate", "archived_at": "2026-03-01T00:00:00"}
    earlier = {"role": "user", "content": "old", "ts": "2026-01-01T00:00:00.000001+00:00"}
    change = {**retitle(earlier["ts"], "T"), "ts": "2026-01-01T00:00:00.000002+00:00"}
    store.archive_dir.mkdir()
    archive = store.archive_dir / f"{store.path(KEY).stem}__20260101-000000.jsonl"
    archive.write_bytes(b"".join(encode_record(r) for r in (header, earlier, change)))
    budget = archive.stat().st_size + store.path(KEY).stat().st_size - 1
    identity = store.identity(KEY)
    assert identity is not None
    rows = store.read_session_tail(KEY, identity, budget)
    assert rows is not None
    assert titles(rows)[:2] == ["T", None]
    assert rows == store.read_session(KEY).rows


def test_a_page_applies_a_declared_kind(tmp_path: Path) -> None:
    store, stamps = session(tmp_path)
    append(store, retitle(stamps[2], "T"))
    page = read_page(store, KEY, stamps[0], 3)
    assert page is not None
    assert page.rows == store.read_session(KEY).rows[1:4]
    assert titles(page.rows) == [None, "T", None]


def test_rotation_folds_a_declared_kind_into_its_row(tmp_path: Path) -> None:
    store, stamps = session(tmp_path)
    append(store, retitle(stamps[4], "T"))
    before = store.read_session(KEY).rows
    store.rotate(KEY, force=True)
    assert store.read_session(KEY).rows == before
    on_disk = [line for line in json_lines(store.path(KEY)) if isinstance(line, dict)]
    assert not [line for line in on_disk if line.get("_type") == KIND]  # folded, not kept
    assert [line.get("title") for line in on_disk if line.get("ts") == stamps[4]] == ["T"]


def test_rewind_keeps_changes_of_kept_rows_and_archives_changes_of_dropped_ones(
    tmp_path: Path,
) -> None:
    store, stamps = session(tmp_path)
    append(store, retitle(stamps[1], "kept"), retitle(stamps[4], "dropped"))
    assert store.rewind(KEY, stamps[2]) == 3
    assert titles(store.read_session(KEY).rows) == [None, "kept", None]
    in_file = [line for line in json_lines(store.path(KEY)) if isinstance(line, dict)]
    assert [line["title"] for line in in_file if line.get("_type") == KIND] == ["kept"]
    (archive,) = store.archive_paths(KEY)
    archived = [orjson.loads(line) for line in archive.read_bytes().splitlines()[1:]]
    assert [line["title"] for line in archived if line.get("_type") == KIND] == ["dropped"]
