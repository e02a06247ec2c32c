"""extract_turns and friends: which records and roles the summarizer reads (never meta),
and which lines of a transcript file reach it (those the store's fold keeps as rows)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from summaries.core.extract import (
    READ_ROLES,
    count_user_turns,
    extract_turns,
)
from tests.summaries.extract_helpers import a, turns_of_bytes, u
from transcripts.core.user_turns import is_user_turn

# --- role filtering ------------------------------------------------------------------


def test_roles_and_indexes() -> None:
    records = [
        u("first"),
        {"role": "tool", "content": "ran ls"},
        {"role": "error", "content": "boom"},
        {"role": "system", "content": "sys"},
        {"role": "nudge", "content": "keep going"},
        {"role": "tool_result", "content": "ok"},
        a("answer"),
        {"role": "merged_summary", "content": "child fork result"},
        {"role": "USER", "content": "wrong case"},
    ]
    turns = extract_turns(records)
    assert [(t.index, t.role, t.text, t.user_turn) for t in turns] == [
        (1, "user", "first", 1),
        (2, "assistant", "answer", None),
        (3, "assistant", "child fork result", None),
    ]
    assert frozenset({"user", "assistant", "merged_summary"}) == READ_ROLES


@pytest.mark.parametrize(
    "record",
    [
        "not a dict",
        None,
        ["user", "x"],
        {"role": "user"},
        {"role": "user", "content": None},
        {"role": "user", "content": 42},
        {"role": "user", "content": ["block"]},
        {"role": "user", "content": ""},
        {"role": "user", "content": " \n\t "},
        {"role": 1, "content": "x"},
        {"content": "no role"},
    ],
)
def test_skipped_records(record: Any) -> None:
    assert extract_turns([record]) == []
    assert sum(map(is_user_turn, [record])) == 0


def test_ts_kept_only_if_str() -> None:
    turns = extract_turns(
        [u("a", "2026-08-10T10:00:00+00:00"), u("b", 1760000000), a("c", {"x": 1})]
    )
    assert [t.ts for t in turns] == ["2026-08-10T10:00:00+00:00", None, None]


class ExplodingMeta:
    """Any use at all of this value fails the test."""

    def __getattribute__(self, name: str) -> Any:
        raise AssertionError(f"meta was read ({name})")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("meta was compared")

    __hash__ = None  # type: ignore[assignment]


class KeyRecordingDict(dict[str, Any]):
    seen: list[str]

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.append(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.seen.append(key)
        return super().__getitem__(key)


def test_meta_is_never_read() -> None:
    rec = KeyRecordingDict(
        role="assistant", content="done", ts="t1", meta=ExplodingMeta(), cls="x", tools=["a"]
    )
    rec.seen = []
    user = KeyRecordingDict(role="user", content="go", ts="t0", meta=ExplodingMeta())
    user.seen = []
    turns = extract_turns([user, rec])
    assert [t.text for t in turns] == ["go", "done"]
    assert set(rec.seen) <= {"role", "content", "ts"}
    assert sum(map(is_user_turn, [user])) == 1
    assert set(user.seen) <= {"role", "content", "ts"}


def test_a_file_yields_only_the_rows_the_fold_keeps() -> None:
    lines = [
        b"\xef\xbb\xbf" + orjson.dumps({"_type": "metadata", "created_at": "x"}) + b"\n",
        b"\n",
        b"   \n",
        b"{torn\n",
        b"[1, 2]\n",
        b'"just a string"\n',
        b"[" * 5000 + b"]" * 5000 + b"\n",
        orjson.dumps({"_type": "revision", "target_ts": "t", "patch": {"role": "user"}}) + b"\n",
        orjson.dumps({"_type": "archive", "reason": "rotate", "count": 1}) + b"\n",
        orjson.dumps(u("real", "t1")) + b"\n",
        b'{"role":"user","content":"deep","meta":' + b"[" * 5000 + b"]" * 5000 + b"}\n",
    ]
    turns = turns_of_bytes(b"".join(lines))
    assert [t.text for t in turns] == ["real"]


def test_a_bom_before_the_first_row_is_not_part_of_it() -> None:
    turns = turns_of_bytes(b"\xef\xbb\xbf" + orjson.dumps(u("hello")))
    assert [t.text for t in turns] == ["hello"]


def test_resends_and_counts_on_a_realistic_session() -> None:
    big_meta = {"file_changes": [{"path": f"f{i}.py", "diff": "x" * 500} for i in range(40)]}
    records: list[Any] = []
    for i in range(1, 30):
        records.append(u(f"request {i}\n  with   spacing" if i % 7 else "same", f"t{i}u"))
        records.append(a("z" * (i * 97), f"t{i}a", meta=big_meta))
        if i % 5 == 0:
            records.append(u("[cron notification] tick", f"t{i}c"))
            records.append({"role": "tool", "content": "x", "meta": big_meta})
        if i % 9 == 0:
            records.append({"role": "merged_summary", "content": "merged fork", "ts": 5})
        if i % 7 == 0:
            records.append(u(" same  ", f"t{i}r"))  # a resend across automation rows
    turns = extract_turns(records, assistant_excerpt_chars=120, max_user_chars=10)
    assert count_user_turns(turns) == 33
    assert sum(map(is_user_turn, records)) == 33
    assert any(t.repeat_of for t in turns)


def test_edge_lines_reach_the_summarizer_as_the_fold_reads_them() -> None:
    data = b"".join(
        [
            b"\xef\xbb\xbf" + orjson.dumps({"_type": "metadata", "created_at": "x"}) + b"\n",
            orjson.dumps(u("plain", "t1")) + b"\n",
            b'{"role":"user","content":"lone \\ud800 surrogate","ts":"t2"}\n',
            b'{"role":"assistant","content":"meta surrogate","meta":{"m":"\\udc00"}}\n',
            b'{"role":"user","content":"nan ts","ts":NaN}\n',
            b'{"role":"user","content":"dup","role":"assistant"}\n',
            b'{"role":"user","content":"inf ts","ts":1e999}\n',
            b'{"role":"user","content":"null type","_type":null}\n',
            b'{"_type":"stray","role":"user","content":"stray"}\n',
            b"\xef\xbb\xbf" + orjson.dumps(u("bom mid-file")) + b"\n",
            b'{"role":"user","content":"bad utf8 \xff"}\n',
            b"\n",
            b"[1]\n",
            b'{"role":"user","content":"trailing comma",}\n',
            orjson.dumps(a("unterminated last line")),
        ]
    )
    assert [t.text for t in turns_of_bytes(data)] == [
        "plain",
        "lone \ud800 surrogate",
        "meta surrogate",
        "dup",
        "inf ts",
        "null type",
        "unterminated last line",
    ]
