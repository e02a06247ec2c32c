"""The content rule in the pure core: every store writer refuses what breaks it before a
byte is written, whoever calls (API, services, admin, commands); readers bound what is
already on disk."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.content import (
    MAX_DEPTH,
    MAX_TEXT_CHARS,
    TOO_DEEP_MARKER,
    ContentRejected,
    bound_row,
    bound_rows,
    check_content,
    loads_checked,
)
from transcripts.core.errors import RevisionRejected
from transcripts.core.fold import FoldReport
from transcripts.core.store import TranscriptStore


def nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


BAD: list[tuple[str, Any]] = [
    ("nested", nested(MAX_DEPTH)),  # inside a row: MAX_DEPTH + 1 levels
    ("nan", math.nan),
    ("inf", -math.inf),
    ("int", 2**64),
    ("nul", "a\x00b"),
    ("nul_key", {"a\x00": 1}),
    ("long", "x" * (MAX_TEXT_CHARS + 1)),
    ("not_json", {1, 2}),
]


@pytest.fixture
def tstore(tmp_path: Path) -> TranscriptStore:
    store = TranscriptStore(tmp_path / "sessions")
    store.create("k", {"title": "t"})
    return store


@pytest.mark.parametrize(("name", "bad"), BAD)
def test_append_rows_refuses_before_writing(tstore: TranscriptStore, name: str, bad: Any) -> None:
    before = tstore.path("k").read_bytes()
    with pytest.raises(ContentRejected):
        tstore.append_rows("k", [{"role": "tool", "content": "x", "meta": {"v": bad}}])
    with pytest.raises(ContentRejected):
        tstore.append_rows("k", [{"role": "user", "content": "x", "meta": {"v": bad}}])
    assert tstore.path("k").read_bytes() == before


@pytest.mark.parametrize(("name", "bad"), BAD)
def test_append_revision_refuses_before_writing(
    tstore: TranscriptStore, name: str, bad: Any
) -> None:
    ts = tstore.append_rows("k", [{"role": "assistant", "content": "x"}]).ts[0]
    before = tstore.path("k").read_bytes()
    with pytest.raises(ContentRejected):
        tstore.append_revision("k", ts, {"meta": {"v": bad}})
    assert tstore.path("k").read_bytes() == before


@pytest.mark.parametrize(("name", "bad"), BAD)
def test_metadata_writes_refuse_before_writing(
    tstore: TranscriptStore, name: str, bad: Any
) -> None:
    before = tstore.path("k").read_bytes()
    with pytest.raises(ContentRejected):
        tstore.update_metadata("k", {"title": bad})
    assert tstore.path("k").read_bytes() == before
    with pytest.raises(ContentRejected):
        tstore.create("k2", {"title": bad})
    assert not tstore.path("k2").exists()


def test_a_revision_may_not_change_role(tstore: TranscriptStore) -> None:
    ts = tstore.append_rows("k", [{"role": "user", "content": "raw ghp_" + "A" * 36}]).ts[0]
    before = tstore.path("k").read_bytes()
    with pytest.raises(RevisionRejected, match="role"):
        tstore.append_revision("k", ts, {"role": "assistant"})
    assert tstore.path("k").read_bytes() == before


def test_the_limit_itself_is_accepted(tstore: TranscriptStore) -> None:
    # The limit counts the whole record, as it counts a whole request body: a row's meta
    # sits one level down, a revision's patch values two (record, patch, value).
    meta = nested(MAX_DEPTH - 1)
    row = {"role": "tool", "content": "x" * MAX_TEXT_CHARS, "meta": meta}
    ts = tstore.append_rows("k", [row]).ts[0]
    assert tstore.read_session("k").rows[-1]["meta"] == meta
    assert tstore.append_revision("k", ts, {"meta": nested(MAX_DEPTH - 2)}).ts
    with pytest.raises(ContentRejected, match="nested"):
        tstore.append_revision("k", ts, {"meta": meta})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b'{"n": NaN}', "finite"),
        (b'{"n": -Infinity}', "finite"),
        (b'{"n": 1e400}', "finite"),
        (b'{"n": 123456789012345678901234567890}', "64 bits"),
        (b'{"s": "\\u0000"}', "NUL"),
        (b"[" * 100_000 + b"]" * 100_000, "nested"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested"),
    ],
)
def test_loads_checked_refuses(text: bytes, problem: str) -> None:
    with pytest.raises(ContentRejected, match=problem):
        loads_checked(text)


def test_loads_checked_accepts_json_and_refuses_non_json() -> None:
    assert loads_checked(b'{"a": [1, 2.5, "\\u00e9", null, true]}') == {
        "a": [1, 2.5, "é", None, True]
    }
    with pytest.raises(ValueError, match="Expecting"):
        loads_checked(b"{nope")
    check_content(nested(MAX_DEPTH))  # at the limit: accepted
    with pytest.raises(ContentRejected):
        check_content(nested(MAX_DEPTH + 1))


def test_bound_rows_marks_each_deep_field_and_reports_it() -> None:
    ok = {"role": "tool", "content": "fine", "ts": "t1", "meta": nested(MAX_DEPTH - 1)}
    deep = {"role": "tool", "content": nested(3000), "ts": "t2", "meta": nested(MAX_DEPTH)}
    assert bound_row(ok) is None
    report = FoldReport()
    rows = [ok, deep]
    out = bound_rows(rows, report)
    assert out[0] is ok
    assert out[1] == {
        "role": "tool",
        "content": TOO_DEEP_MARKER,
        "ts": "t2",
        "meta": TOO_DEEP_MARKER,
    }
    assert rows[1] is deep  # the folded rows are not mutated
    assert [(a.kind, a.offset, a.detail) for a in report.anomalies] == [
        ("too_deep", -1, "row ts t2")
    ]
    clean = [ok]
    assert bound_rows(clean, FoldReport()) is clean
