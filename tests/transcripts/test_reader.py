"""The reader is total: bytes in, rows plus one anomaly per defect (kind + byte offset) out."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from tests.transcripts.helpers import (
    KEY,
    fold_data,
    kinds,
    line,
    make_store,
    meta_line,
    row,
    ts_at,
)
from transcripts.core.fold import fold_bytes
from transcripts.core.reader import RawLine, iter_lines

META = meta_line(title="t")
ROW1 = line(row("user", "hello", ts_at(1)))
ROW2 = line(row("assistant", "hi", ts_at(2)))
HEAD = META + ROW1 + ROW2  # a healthy file
TAIL_AT = len(HEAD)  # the offset of whatever follows HEAD


# ---------------------------------------------------------------- iter_lines


def test_iter_lines_splits_on_newline_only_and_reports_offsets() -> None:
    data = b"a\r\nb\xe2\x80\xa8c\nd\xc2\x85e\x1cf\n\ng"
    lines = list(iter_lines(io.BytesIO(data)))
    assert lines == [
        RawLine(0, b"a\r", True),
        RawLine(3, b"b\xe2\x80\xa8c", True),
        RawLine(9, b"d\xc2\x85e\x1cf", True),
        RawLine(16, b"", True),
        RawLine(17, b"g", False),
    ]


@pytest.mark.parametrize("block_size", [1, 2, 3, 7, 64, 4096])
def test_iter_lines_is_independent_of_block_size(block_size: int) -> None:
    data = HEAD + b"x" * 50 + b"\n" + b"\n" + b'{"partial'
    expected = list(iter_lines(io.BytesIO(data)))
    assert list(iter_lines(io.BytesIO(data), block_size=block_size)) == expected


@pytest.mark.parametrize("block_size", [1, 5, 16, 4096])
def test_iter_lines_skips_an_oversize_line_without_losing_its_neighbours(block_size: int) -> None:
    data = b"short\n" + b"L" * 100 + b"\nnext\n" + b"T" * 40
    lines = list(iter_lines(io.BytesIO(data), max_line=30, block_size=block_size))
    assert lines == [
        RawLine(0, b"short", True),
        RawLine(6, None, True),
        RawLine(107, b"next", True),
        RawLine(112, None, False),
    ]


def test_iter_lines_of_empty_input_yields_nothing() -> None:
    assert list(iter_lines(io.BytesIO(b""))) == []


# ---------------------------------------------------------------- damaged tails (D7)


def test_healthy_file_has_no_anomalies() -> None:
    folded = fold_bytes(HEAD)
    assert folded.metadata == orjson.loads(META)
    assert folded.rows == [orjson.loads(ROW1), orjson.loads(ROW2)]
    assert kinds(folded) == []
    assert folded.report.lines == 3


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(b'{"role":"user","content":"cut he', id="partial-json"),
        pytest.param(b'{"role":"user","content":"\xe6\x87', id="partial-multibyte"),
        pytest.param(b"\x00" * 4096, id="nul-garbage"),
        pytest.param(b"\xff", id="one-bad-byte"),
    ],
)
def test_torn_tail_is_one_torn_tail_anomaly_and_every_complete_line_is_read(tail: bytes) -> None:
    folded = fold_bytes(HEAD + tail)
    assert folded.metadata == orjson.loads(META)
    assert folded.rows == [orjson.loads(ROW1), orjson.loads(ROW2)]
    assert kinds(folded) == [("torn_tail", TAIL_AT)]


def test_valid_object_without_newline_is_kept_as_a_row_flagged_unterminated() -> None:
    last = row("assistant", "no newline", ts_at(3))
    folded = fold_bytes(HEAD + orjson.dumps(last))
    assert folded.rows[-1] == last
    assert len(folded.rows) == 3
    assert kinds(folded) == [("unterminated", TAIL_AT)]


def test_crlf_line_endings_read_as_ordinary_records() -> None:
    data = HEAD.replace(b"\n", b"\r\n")
    folded = fold_bytes(data)
    assert folded.metadata == orjson.loads(META)
    assert folded.rows == [orjson.loads(ROW1), orjson.loads(ROW2)]
    assert kinds(folded) == []


def test_bom_on_line_one_is_stripped_reported_and_metadata_survives() -> None:
    folded = fold_bytes(b"\xef\xbb\xbf" + HEAD)
    assert folded.metadata == orjson.loads(META)
    assert len(folded.rows) == 2
    assert kinds(folded) == [("bom", 0)]


def test_bom_is_only_special_at_the_start_of_the_file() -> None:
    folded = fold_bytes(HEAD + b"\xef\xbb\xbf" + ROW1)
    assert kinds(folded) == [("bad_json", TAIL_AT)]


def test_blank_lines_are_skipped_and_each_reported() -> None:
    data = META + b"\n" + ROW1 + b"   \t\r\n" + ROW2
    folded = fold_bytes(data)
    assert len(folded.rows) == 2
    blank1 = len(META)
    blank2 = blank1 + 1 + len(ROW1)
    assert kinds(folded) == [("blank", blank1), ("blank", blank2)]


def test_invalid_utf8_in_the_middle_loses_only_that_line() -> None:
    # D9: 1000 lines, line 500 carries \xff\xfe.
    lines = [meta_line()] + [line(row("user", f"m{i}", ts_at(i))) for i in range(1, 1000)]
    bad_index = 500
    lines[bad_index] = lines[bad_index].replace(b'"m', b'"\xff\xfem', 1)
    data = b"".join(lines)
    folded = fold_bytes(data)
    assert len(folded.rows) == 998
    bad_offset = sum(len(x) for x in lines[:bad_index])
    assert kinds(folded) == [("bad_utf8", bad_offset)]
    assert all(r["content"] != f"m{bad_index}" for r in folded.rows)


@pytest.mark.parametrize("value", [b"[1, 2]", b'"text"', b"42", b"null", b"true", b"[]"])
def test_non_object_lines_are_skipped_as_not_object(value: bytes) -> None:
    folded = fold_bytes(HEAD + value + b"\n" + line(row("user", "after", ts_at(3))))
    assert len(folded.rows) == 3
    assert kinds(folded) == [("not_object", TAIL_AT)]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deep-nesting"),
        pytest.param(b"[" * 100_000, id="deep-unclosed"),
        pytest.param(b'{"role":"user","content":' * 5000, id="deep-objects"),
        pytest.param(b'{"ts":"x","n":NaN}', id="nan"),
        pytest.param(b'{"ts":"x","n":Infinity}', id="infinity"),
        pytest.param(b'{"ts":"x","n":-Infinity}', id="minus-infinity"),
        pytest.param(b"{'role': 'user'}", id="python-repr"),
        pytest.param(b'{"role":"user",}', id="trailing-comma"),
    ],
)
def test_pathological_json_is_one_bad_json_anomaly_and_never_raises(bad: bytes) -> None:
    folded = fold_bytes(HEAD + bad + b"\n" + line(row("user", "after", ts_at(3))))
    assert len(folded.rows) == 3
    assert kinds(folded) == [("bad_json", TAIL_AT)]


def test_lone_surrogate_escape_from_the_original_writer_is_read_as_a_row() -> None:
    # The original wrote json.dumps(ensure_ascii=True), which can emit "\ud800".
    legacy = b'{"role": "assistant", "content": "bad \\ud800 half", "ts": "' + ts_at(3).encode()
    folded = fold_bytes(HEAD + legacy + b'"}\n')
    assert folded.rows[-1]["content"] == "bad \ud800 half"
    assert kinds(folded) == []


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x1c", "\r", "\x00", "😀"])
def test_framing_characters_inside_content_never_split_a_record(char: str) -> None:
    content = f"before{char}after{char}"
    encoded = line(row("assistant", content, ts_at(3)))
    assert encoded.count(b"\n") == 1
    assert encoded.endswith(b"\n")
    folded = fold_bytes(HEAD + encoded + line(row("user", "next", ts_at(4))))
    assert [r["content"] for r in folded.rows] == ["hello", "hi", content, "next"]
    assert kinds(folded) == []


def test_oversize_line_is_one_anomaly_at_its_offset() -> None:
    big = line(row("assistant", "x" * 500, ts_at(3)))
    data = HEAD + big + line(row("user", "after", ts_at(4)))
    folded = fold_data(data, max_line=200)
    assert [r["content"] for r in folded.rows] == ["hello", "hi", "after"]
    assert kinds(folded) == [("oversize", TAIL_AT)]


def test_oversize_unterminated_tail_is_one_anomaly() -> None:
    folded = fold_data(HEAD + b"y" * 1000, max_line=200, block_size=64)
    assert len(folded.rows) == 2
    assert kinds(folded) == [("oversize", TAIL_AT)]


def test_store_reader_reports_lines_longer_than_its_max_line_as_oversize(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_line=300)
    big = line(row("assistant", "z" * 1000, ts_at(3)))
    store.path(KEY).write_bytes(HEAD + big + line(row("user", "after", ts_at(4))))
    folded = store.read_file(KEY)
    assert [r["content"] for r in folded.rows] == ["hello", "hi", "after"]
    assert kinds(folded) == [("oversize", TAIL_AT)]
    assert store.read_session(KEY).report.counts() == {"oversize": 1}


def test_every_defect_at_once_gets_exactly_one_anomaly_each() -> None:
    parts = [
        b"\xef\xbb\xbf" + META,
        ROW1,
        b"\n",
        b"[1]\n",
        b'{"role":"user","content":"\xff"}\n',
        b'{"x":NaN}\n',
        b"[" * 3000 + b"\n",
        ROW2,
        b'{"role":"assistant","content":"to',
    ]
    data = b"".join(parts)
    offsets = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    folded = fold_bytes(data)
    assert len(folded.rows) == 2
    assert kinds(folded) == [
        ("bom", 0),
        ("blank", offsets[2]),
        ("not_object", offsets[3]),
        ("bad_utf8", offsets[4]),
        ("bad_json", offsets[5]),
        ("bad_json", offsets[6]),
        ("torn_tail", offsets[8]),
    ]
    assert folded.report.lines == len(parts)


def test_report_records_the_file_name_of_each_anomaly(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.path(KEY).write_bytes(HEAD + b"garbage\n")
    report = store.read_session(KEY).report
    assert [(a.kind, a.file, a.offset) for a in report.anomalies] == [
        ("bad_json", store.path(KEY).name, TAIL_AT)
    ]
    assert report.as_dict()["counts"] == {"bad_json": 1}
