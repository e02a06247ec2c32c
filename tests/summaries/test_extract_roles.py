"""extract_turns and friends: which records and roles the summarizer reads (never meta),
and the fast line path agreeing with the dict path and the store fold."""

from __future__ import annotations

import io
import json
from typing import Any

import orjson
import pytest

from summaries.core.extract import (
    READ_ROLES,
    count_user_turns,
    count_user_turns_in_records,
    extract_turns,
    extract_turns_from_lines,
)
from tests.summaries.extract_helpers import a, both, lines_of, u

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
    turns = both(records)
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
    assert count_user_turns_in_records([record]) == 0
    if isinstance(record, dict):
        assert extract_turns_from_lines(lines_of([record])) == []


def test_ts_kept_only_if_str() -> None:
    turns = both([u("a", "2026-08-10T10:00:00+00:00"), u("b", 1760000000), a("c", {"x": 1})])
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
    assert count_user_turns_in_records([user]) == 1
    assert set(user.seen) <= {"role", "content", "ts"}


def test_fast_path_never_decodes_meta() -> None:
    # Invalid UTF-8 and a float overflow inside meta: json.loads refuses the line, so a
    # reader that decoded meta could not have produced this row.
    line = b'{"role":"assistant","content":"kept","ts":"t","meta":{"b":"\xff\xfe","n":1e999}}\n'
    with pytest.raises(UnicodeDecodeError):
        json.loads(line)
    turns = extract_turns_from_lines([line])
    assert [(t.role, t.text, t.ts) for t in turns] == [("assistant", "kept", "t")]


def test_fast_path_skips_what_the_reader_skips() -> None:
    lines = [
        b"\xef\xbb\xbf" + orjson.dumps({"_type": "metadata", "created_at": "x"}) + b"\n",
        b"\n",
        b"   \n",
        b"{torn",
        b"[1, 2]\n",
        b'"just a string"\n',
        b"[" * 5000 + b"]" * 5000 + b"\n",
        orjson.dumps({"_type": "revision", "target_ts": "t", "patch": {"role": "user"}}),
        orjson.dumps({"_type": "archive", "reason": "rotate", "count": 1}),
        orjson.dumps(u("real", "t1")),
        b'{"role":"user","content":"deep","meta":' + b"[" * 5000 + b"]" * 5000 + b"}\n",
    ]
    turns = extract_turns_from_lines(lines)
    assert [t.text for t in turns] == ["real"]


def test_fast_path_strips_bom_on_a_row() -> None:
    turns = extract_turns_from_lines([b"\xef\xbb\xbf" + orjson.dumps(u("hello"))])
    assert [t.text for t in turns] == ["hello"]


def test_fast_path_matches_dict_path_on_a_realistic_session() -> None:
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
    turns = both(records, assistant_excerpt_chars=120, max_user_chars=10)
    assert count_user_turns(turns) == 33
    assert count_user_turns_in_records(records) == 33
    assert any(t.repeat_of for t in turns)


def test_fast_path_matches_the_store_fold_on_edge_lines() -> None:
    # Whatever the store's fold keeps, the fast path keeps, line for line.
    from transcripts.core.fold import fold_bytes

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
    folded = fold_bytes(data)
    expected = extract_turns(folded.rows)
    assert extract_turns_from_lines(io.BytesIO(data)) == expected
    assert [t.text for t in expected] == [
        "plain",
        "lone \ud800 surrogate",
        "meta surrogate",
        "dup",
        "inf ts",
        "null type",
        "unterminated last line",
    ]
