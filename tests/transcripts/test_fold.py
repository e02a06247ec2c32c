"""THE fold: revisions merge shallowly in file order, last wins; nothing on disk raises."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest

from tests.transcripts.helpers import fold_data, kinds, line, meta_line, revision, row, ts_at
from transcripts.core.fold import fold_bytes, fold_lines, fold_stream
from transcripts.core.reader import iter_lines


def _file(*records: dict[str, Any], meta: bool = True) -> tuple[bytes, list[int]]:
    """Bytes of a transcript plus the byte offset of each record (line 0 excluded)."""
    data = meta_line() if meta else b""
    offsets = []
    for record in records:
        offsets.append(len(data))
        data += line(record)
    return data, offsets


def _contents(data: bytes) -> list[Any]:
    return [r["content"] for r in fold_bytes(data).rows]


def test_file_without_revisions_folds_to_exactly_its_rows() -> None:
    rows = [
        row("user", "q", ts_at(1), source_thread="dashboard"),
        row("assistant", "a", ts_at(2), meta={"mid": "m-1", "file_changes": [{"p": "x"}]}),
        row("system", "s", ts_at(3), cls="banner"),
    ]
    data, _ = _file(*rows)
    folded = fold_bytes(data)
    assert folded.rows == rows
    assert folded.metadata == orjson.loads(meta_line())
    assert kinds(folded) == []
    assert folded.report.revisions == 0


def test_stream_and_line_folds_agree() -> None:
    data, _ = _file(
        row("user", "q", ts_at(1)),
        revision(ts_at(1), {"cls": "x"}, ts_at(2)),
        row("user", "q2", ts_at(2)),  # dup ts with the revision
    )
    data += b"junk\n" + b'{"role":"user"'
    a = fold_stream(io.BytesIO(data))
    b = fold_lines(iter_lines(io.BytesIO(data)))
    assert (a.rows, a.metadata, kinds(a), a.report.lines) == (
        b.rows,
        b.metadata,
        kinds(b),
        b.report.lines,
    )


def test_revision_is_a_shallow_merge_and_the_last_revision_wins() -> None:
    base = row("assistant", "draft", ts_at(1), meta={"mid": "m-1", "kind": "x"}, cls="streaming")
    data, _ = _file(
        base,
        revision(ts_at(1), {"cls": "stopping", "meta": {"kind": "stop_event"}}, ts_at(2)),
        row("user", "next", ts_at(3)),
        revision(ts_at(1), {"cls": "stopped", "extra": [1, 2]}, ts_at(4)),
    )
    folded = fold_bytes(data)
    assert folded.rows[0] == {
        "role": "assistant",
        "content": "draft",
        "ts": ts_at(1),
        "meta": {"kind": "stop_event"},  # replaced whole, not deep-merged
        "cls": "stopped",
        "extra": [1, 2],
    }
    assert folded.rows[1] == row("user", "next", ts_at(3))
    assert folded.report.revisions == 2
    assert kinds(folded) == []


def test_patch_value_none_sets_the_field_to_null_rather_than_removing_it() -> None:
    data, _ = _file(
        row("assistant", "a", ts_at(1), cls="x"), revision(ts_at(1), {"cls": None}, ts_at(2))
    )
    assert fold_bytes(data).rows[0] == {
        "role": "assistant",
        "content": "a",
        "ts": ts_at(1),
        "cls": None,
    }


def test_revision_of_a_duplicate_ts_applies_to_the_last_row_bearing_it() -> None:
    data, offsets = _file(
        row("user", "first", ts_at(1)),
        row("user", "second", ts_at(1)),
        revision(ts_at(1), {"content": "patched"}, ts_at(2)),
    )
    folded = fold_bytes(data)
    assert [r["content"] for r in folded.rows] == ["first", "patched"]
    assert kinds(folded) == [("dup_ts", offsets[1])]


def test_revision_never_targets_a_row_written_after_it() -> None:
    data, offsets = _file(
        row("user", "a", ts_at(1)),
        revision(ts_at(3), {"content": "too early"}, ts_at(2)),
        row("user", "b", ts_at(3)),
    )
    folded = fold_bytes(data)
    assert [r["content"] for r in folded.rows] == ["a", "b"]
    assert kinds(folded) == [("orphan_revision", offsets[1])]


def test_orphan_revision_is_reported_and_changes_nothing() -> None:
    rows = [row("user", "a", ts_at(1)), row("assistant", "b", ts_at(2))]
    data, offsets = _file(*rows, revision(ts_at(99), {"content": "ghost"}, ts_at(3)))
    folded = fold_bytes(data)
    assert folded.rows == rows
    assert kinds(folded) == [("orphan_revision", offsets[2])]


def test_revision_cannot_target_another_revision() -> None:
    data, offsets = _file(
        row("user", "a", ts_at(1)),
        revision(ts_at(1), {"cls": "x"}, ts_at(2)),
        revision(ts_at(2), {"cls": "y"}, ts_at(3)),
    )
    folded = fold_bytes(data)
    assert folded.rows[0]["cls"] == "x"
    assert kinds(folded) == [("orphan_revision", offsets[2])]


def test_patch_keys_ts_and_type_found_on_disk_are_ignored_and_reported() -> None:
    data, offsets = _file(
        row("user", "a", ts_at(1)),
        revision(ts_at(1), {"ts": ts_at(50), "_type": "metadata", "cls": "kept"}, ts_at(2)),
        row("user", "b", ts_at(3)),
        revision(ts_at(1), {"content": "still addressable by its ts"}, ts_at(4)),
    )
    folded = fold_bytes(data)
    first = folded.rows[0]
    assert first["ts"] == ts_at(1)
    assert "_type" not in first
    assert first["cls"] == "kept"
    assert first["content"] == "still addressable by its ts"
    assert kinds(folded) == [("invalid_revision", offsets[1])]


@pytest.mark.parametrize(
    "bad",
    [
        {"_type": "revision", "target_ts": 5, "patch": {"a": 1}, "ts": ts_at(2)},
        {"_type": "revision", "target_ts": ts_at(1), "patch": ["a"], "ts": ts_at(2)},
        {"_type": "revision", "target_ts": ts_at(1), "ts": ts_at(2)},
    ],
)
def test_malformed_revision_is_reported_and_skipped(bad: dict[str, Any]) -> None:
    data, offsets = _file(row("user", "a", ts_at(1)), bad)
    folded = fold_bytes(data)
    assert folded.rows == [row("user", "a", ts_at(1))]
    assert kinds(folded) == [("invalid_revision", offsets[1])]


# ---------------------------------------------------------------- position hints


def _ordered(*records: dict[str, Any]) -> list[Any]:
    return _contents(_file(*records)[0])


def test_position_hint_moves_a_row_after_another() -> None:
    assert _ordered(
        row("user", "a", ts_at(1)),
        row("user", "b", ts_at(2)),
        row("user", "c", ts_at(3)),
        revision(ts_at(3), {"_after_ts": ts_at(1)}, ts_at(4)),
    ) == ["a", "c", "b"]


def test_empty_position_hint_moves_a_row_to_the_front() -> None:
    assert _ordered(
        row("user", "a", ts_at(1)),
        row("user", "b", ts_at(2)),
        revision(ts_at(2), {"_after_ts": ""}, ts_at(3)),
    ) == ["b", "a"]


def test_position_hint_and_patch_apply_together_and_the_hint_is_not_a_field() -> None:
    data, _ = _file(
        row("user", "a", ts_at(1)),
        row("assistant", "b", ts_at(2)),
        revision(ts_at(2), {"_after_ts": "", "cls": "moved"}, ts_at(3)),
    )
    folded = fold_bytes(data)
    assert folded.rows[0] == row("assistant", "b", ts_at(2), cls="moved")
    assert all("_after_ts" not in r for r in folded.rows)


def test_moves_apply_in_file_order() -> None:
    rows = [row("user", c, ts_at(i + 1)) for i, c in enumerate("abcd")]
    assert _ordered(
        *rows,
        revision(ts_at(1), {"_after_ts": ts_at(4)}, ts_at(5)),  # b c d a
        revision(ts_at(3), {"_after_ts": ""}, ts_at(6)),  # c b d a
        revision(ts_at(2), {"_after_ts": ts_at(1)}, ts_at(7)),  # c d a b
    ) == list("cdab")


def test_many_moves_give_the_same_order_as_applying_them_one_by_one() -> None:
    n = 12
    rows = [row("user", str(i), ts_at(i + 1)) for i in range(n)]
    expected = [str(i) for i in range(n)]
    revisions = []
    for step in range(20):
        target = (step * 7) % n
        anchor = None if step % 4 == 0 else (step * 5 + 3) % n
        hint = "" if anchor is None else ts_at(anchor + 1)
        revisions.append(revision(ts_at(target + 1), {"_after_ts": hint}, ts_at(100 + step)))
        if anchor == target:
            continue
        expected.remove(str(target))
        expected.insert(0 if anchor is None else expected.index(str(anchor)) + 1, str(target))
    assert len(revisions) > 8  # past the fold's small-move fast path
    assert _ordered(*rows, *revisions) == expected


def test_unknown_position_anchor_is_reported_and_the_row_stays() -> None:
    data, offsets = _file(
        row("user", "a", ts_at(1)),
        row("user", "b", ts_at(2)),
        revision(ts_at(2), {"_after_ts": ts_at(99), "cls": "still applied"}, ts_at(3)),
    )
    folded = fold_bytes(data)
    assert [r["content"] for r in folded.rows] == ["a", "b"]
    assert folded.rows[1]["cls"] == "still applied"
    assert kinds(folded) == [("invalid_revision", offsets[2])]


def test_moving_a_row_after_itself_changes_nothing() -> None:
    assert _ordered(
        row("user", "a", ts_at(1)),
        row("user", "b", ts_at(2)),
        revision(ts_at(1), {"_after_ts": ts_at(1)}, ts_at(3)),
    ) == ["a", "b"]


# ---------------------------------------------------------------- ts reporting


def test_duplicate_and_non_monotonic_ts_are_reported_and_rows_kept() -> None:
    stamps = [ts_at(1), ts_at(2), ts_at(2), ts_at(5), ts_at(4), ts_at(6)]
    rows = [row("user", f"r{i}", ts) for i, ts in enumerate(stamps)]
    data, offsets = _file(*rows)
    folded = fold_bytes(data)
    assert folded.rows == rows
    assert kinds(folded) == [("dup_ts", offsets[2]), ("non_monotonic_ts", offsets[4])]


def test_rows_with_missing_or_unparseable_ts_are_kept_and_reported() -> None:
    data, offsets = _file(
        {"role": "user", "content": "no ts"},
        row("user", "a", ts_at(1)),
        row("user", "odd", "yesterday"),
        row("user", "b", ts_at(2)),
    )
    folded = fold_bytes(data)
    assert [r["content"] for r in folded.rows] == ["no ts", "a", "odd", "b"]
    assert kinds(folded) == [("missing_ts", offsets[0]), ("bad_ts", offsets[2])]


def test_a_second_metadata_line_is_a_stray_record_not_a_row() -> None:
    data, offsets = _file(row("user", "a", ts_at(1)), {"_type": "metadata", "title": "late"})
    folded = fold_bytes(data)
    assert folded.metadata is not None
    assert "title" not in folded.metadata
    assert len(folded.rows) == 1
    assert kinds(folded) == [("stray_record", offsets[1])]


def test_a_file_without_metadata_reads_every_line_as_a_row() -> None:
    rows = [row("user", "a", ts_at(1)), row("assistant", "b", ts_at(2))]
    data, _ = _file(*rows, meta=False)
    folded = fold_bytes(data)
    assert folded.metadata is None
    assert folded.rows == rows
    assert kinds(folded) == []


def test_archive_header_is_read_as_a_header() -> None:
    header = {
        "_type": "archive",
        "reason": "rotate",
        "archived_at": "2026-03-01T12:00:00",
        "count": 1,
    }
    data = line(header) + line(row("user", "a", ts_at(1)))
    folded = fold_bytes(data)
    assert folded.header == header
    assert folded.metadata is None
    assert folded.rows == [row("user", "a", ts_at(1))]


def test_fold_with_small_max_line_reports_oversize_revision_and_keeps_going() -> None:
    data, offsets = _file(
        row("user", "a", ts_at(1)),
        revision(ts_at(1), {"content": "x" * 500}, ts_at(2)),
        row("user", "b", ts_at(3)),
    )
    folded = fold_data(data, max_line=300)
    assert [r["content"] for r in folded.rows] == ["a", "b"]
    assert kinds(folded) == [("oversize", offsets[1])]
