"""extract_turns and friends: what the summarizer reads, and only that."""

from __future__ import annotations

import io
import json
from typing import Any

import orjson
import pytest

from summaries.core.extract import (
    INJECTED_PREFIXES,
    MAX_INPUT_CHARS,
    READ_ROLES,
    count_user_turns,
    count_user_turns_in_records,
    excerpt,
    extract_turns,
    extract_turns_from_lines,
    last_activity_ts,
    render_bounded_input,
    render_input,
)
from summaries.core.transcript_turn import TranscriptTurn


def u(content: Any, ts: Any = None, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "ts": ts, **extra}


def a(content: Any, ts: Any = None, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "ts": ts, **extra}


def lines_of(records: list[Any]) -> list[bytes]:
    return [orjson.dumps(r) + b"\n" for r in records]


def both(records: list[Any], **kw: Any) -> list[TranscriptTurn]:
    """Run both entry points and insist they agree."""
    turns = extract_turns(records, **kw)
    assert extract_turns_from_lines(lines_of(records), **kw) == turns
    return turns


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


# --- excerpting ----------------------------------------------------------------------


def test_assistant_excerpt_format() -> None:
    content = "H" * 400 + "M" * 150 + "T" * 400
    (turn,) = both([a(content)])
    assert turn.text == "H" * 400 + "\n[... 150 characters omitted ...]\n" + "T" * 400
    assert turn.truncated is True


def test_assistant_at_exactly_twice_keep_is_whole() -> None:
    (turn,) = both([a("x" * 800)])
    assert turn.text == "x" * 800
    assert turn.truncated is False


def test_excerpt_custom_keep_and_merged_summary() -> None:
    content = "abcdefghij" * 30
    (turn,) = both([{"role": "merged_summary", "content": content}], assistant_excerpt_chars=100)
    assert turn.role == "assistant"
    assert turn.text.startswith(content[:100] + "\n[... 100 characters omitted ...]\n")
    assert turn.text.endswith(content[-100:])


def test_excerpt_zero_keep_is_only_the_marker() -> None:
    assert excerpt("abc", 0) == "\n[... 3 characters omitted ...]\n"


# --- injected automation -------------------------------------------------------------


def test_nine_prefixes() -> None:
    assert len(INJECTED_PREFIXES) == 9
    assert set(INJECTED_PREFIXES) == {
        "[cron notification",
        "[subagent completion event]",
        "[subagent batch completion event]",
        "[auto-nudge cycle",
        "[monitor wake]",
        "[tool refusal",
        "[tool stall",
        "=== restored context",
        "[system]",
    }


@pytest.mark.parametrize("prefix", INJECTED_PREFIXES)
@pytest.mark.parametrize("shape", ["plain", "upper", "leading"])
def test_each_prefix_is_injected(prefix: str, shape: str) -> None:
    text = {"plain": prefix, "upper": prefix.upper(), "leading": "  \n\t" + prefix}[shape]
    records = [u("real request"), u(text + " payload"), a("ok"), u("second real")]
    turns = both(records)
    injected = turns[1]
    assert injected.injected is True
    assert injected.user_turn is None
    assert injected.repeat_of is None
    assert [t.user_turn for t in turns] == [1, None, None, 2]
    assert count_user_turns(turns) == 2
    assert count_user_turns_in_records(records) == 2
    assert "[automation, not the user]\n" + text in render_input(turns)


def test_prefix_must_be_at_start() -> None:
    (turn,) = both([u("see [cron notification] above")])
    assert turn.injected is False
    assert turn.user_turn == 1


def test_injected_row_is_capped_too() -> None:
    (turn,) = both([u("[system] " + "x" * 5000)])
    assert len(turn.text) == 4000
    assert turn.truncated is True


# --- resends -------------------------------------------------------------------------


def test_verbatim_resend_marked() -> None:
    turns = both([u("fix the build"), a("done"), u("fix the build")])
    assert [t.repeat_of for t in turns] == [None, None, 1]
    assert turns[2].user_turn == 2


def test_whitespace_only_difference_is_a_resend() -> None:
    turns = both([u("fix  the\nbuild "), u("\tfix the build")])
    assert turns[1].repeat_of == 1


def test_case_difference_is_not_a_resend() -> None:
    turns = both([u("fix the build"), u("Fix the build")])
    assert turns[1].repeat_of is None


def test_resend_points_at_previous_only() -> None:
    turns = both([u("A"), u("B"), u("A"), u("A"), u("A")])
    assert [t.repeat_of for t in turns] == [None, None, None, 3, 4]


def test_injected_rows_do_not_reset_the_tracker() -> None:
    records = [
        u("deploy it"),
        a("deploying"),
        u("[subagent completion event] deploy it"),
        u("[cron notification] nightly"),
        a("still here"),
        u("deploy it"),
    ]
    turns = both(records)
    assert turns[-1].repeat_of == 1
    assert turns[-1].user_turn == 2


def test_injected_identical_text_is_not_a_resend_target() -> None:
    turns = both([u("[system] ping"), u("[system] ping")])
    assert [t.repeat_of for t in turns] == [None, None]


def test_resend_compares_the_cut_text() -> None:
    first = "x" * 4000 + "tail one"
    second = "x" * 4000 + "tail two"
    turns = both([u(first), u(second)])
    assert turns[1].repeat_of == 1


def test_resend_rendered() -> None:
    turns = both([u("go", "t1"), u("go", "t2")])
    assert "USER (turn 2) [resend of turn 1, not a new request] [t2]\ngo" in render_input(turns)


# --- user cap ------------------------------------------------------------------------


def test_user_cap_and_truncated_flag() -> None:
    turns = both([u("y" * 4000), u("z" * 4001)])
    assert (len(turns[0].text), turns[0].truncated) == (4000, False)
    assert (len(turns[1].text), turns[1].truncated) == (4000, True)


def test_custom_user_cap() -> None:
    (turn,) = both([u("abcdef")], max_user_chars=3)
    assert (turn.text, turn.truncated) == ("abc", True)


# --- counting, last activity, rendering ----------------------------------------------


def test_count_agrees_with_extract_on_mixed_input() -> None:
    records: list[Any] = [
        u("a"),
        u(" "),
        u(None),
        "junk",
        u("[tool stall] x"),
        {"role": "nudge", "content": "n"},
        a("reply"),
        u("b"),
    ]
    assert count_user_turns(extract_turns(records)) == count_user_turns_in_records(records) == 2


def test_last_activity_ts() -> None:
    assert last_activity_ts([]) is None
    turns = both([u("a", "t1"), a("b", "t2"), u("c", ""), a("d")])
    assert last_activity_ts(turns) == "t2"


def test_render_input_format() -> None:
    turns = both(
        [
            u("hello", "2026-08-10T10:00:00+00:00"),
            a("hi"),
            u("[auto-nudge cycle 3] continue"),
            a("L" * 1000),
            u("bye"),
        ]
    )
    assert render_input(turns) == (
        "USER (turn 1) [2026-08-10T10:00:00+00:00]\nhello\n\n"
        "ASSISTANT\nhi\n\n"
        "[automation, not the user]\n[auto-nudge cycle 3] continue\n\n"
        f"ASSISTANT [excerpt]\n{excerpt('L' * 1000, 400)}\n\n"
        "USER (turn 2)\nbye"
    )
    assert render_input([]) == ""


# --- bounded rendering ---------------------------------------------------------------


def _long_session(n: int, reply: int = 790) -> list[TranscriptTurn]:
    records: list[Any] = []
    for i in range(1, n + 1):
        records.append(u(f"request number {i}: " + "r" * 300, f"t{i}"))
        records.append(a(f"reply {i} " + "a" * reply))
    return extract_turns(records)


def test_bounded_is_identity_under_budget() -> None:
    turns = _long_session(5)
    assert render_bounded_input(turns) == render_input(turns)
    assert len(render_input(turns)) < MAX_INPUT_CHARS


def test_bounded_keeps_first_and_newest_turns() -> None:
    turns = _long_session(200)
    full = render_input(turns)
    assert len(full) > MAX_INPUT_CHARS
    out = render_bounded_input(turns)
    assert len(out) <= MAX_INPUT_CHARS
    for n in (1, 2, 3):
        assert f"USER (turn {n}) [t{n}]\nrequest number {n}:" in out
    assert "USER (turn 4) " not in out
    assert "USER (turn 200) [t200]" in out
    assert out.endswith("ASSISTANT\nreply 200 " + "a" * 790)
    kept = [n for n in range(1, 201) if f"USER (turn {n}) [" in out]
    newest = kept[3:]
    assert newest == list(range(newest[0], 201))  # a contiguous newest block
    assert f"[... user turns 4-{newest[0] - 1} omitted ...]" in out
    assert out.count("omitted ...]") == 1 + out.count("characters omitted ...]")


def test_bounded_user_turns_whole_or_dropped() -> None:
    turns = _long_session(60)
    out = render_bounded_input(turns, max_chars=6000)
    assert len(out) <= 6000
    for turn in turns:
        if turn.role == "user" and f"USER (turn {turn.user_turn}) [" in out:
            assert turn.text in out


def test_bounded_first_turns_only_while_they_fit_half() -> None:
    records = [u("u1 " + "x" * 3900), a("a1"), u("u2 " + "y" * 3900), a("a2")]
    records += [u(f"later {i}") for i in range(3, 400)]
    turns = extract_turns(records)
    out = render_bounded_input(turns, max_chars=9000)
    assert len(out) <= 9000
    assert "USER (turn 1)\nu1 " in out
    assert "USER (turn 2)\nu2 " not in out  # would cross half the budget
    assert "USER (turn 399)\nlater 399" in out
    assert "[... user turns 2-" in out


def test_single_oversize_assistant_turn_is_cut() -> None:
    big = "B" * 30_000 + "E" * 30_000
    records = [u("please dump the log"), a(big), u("thanks")]
    turns = extract_turns(records, assistant_excerpt_chars=100_000)
    assert turns[1].text == big  # the excerpt setting let it through whole
    out = render_bounded_input(turns)
    assert len(out) <= MAX_INPUT_CHARS
    assert "omitted ...]" in out
    assert "user turns" not in out  # nothing dropped, only cut
    assert "ASSISTANT [excerpt]\n" + "B" * 5000 + "\n[... 50000 characters omitted ...]\n" in out
    assert "E" * 5000 + "\n\nUSER (turn 2)\nthanks" in out
    assert out.startswith("USER (turn 1)\nplease dump the log")


def test_bounded_omission_without_user_turns() -> None:
    records = [u("start"), u("go on")]
    records += [a(f"chunk {i} " + "c" * 700) for i in range(100)]
    records += [u("final question")]
    turns = extract_turns(records)
    out = render_bounded_input(turns, max_chars=8000)
    assert len(out) <= 8000
    assert "assistant/automation rows omitted ...]" in out
    assert out.endswith("USER (turn 3)\nfinal question")
