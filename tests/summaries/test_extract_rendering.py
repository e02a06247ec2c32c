"""Counting user turns, the last activity stamp, and rendering the summarizer input,
whole and bounded to a budget."""

from __future__ import annotations

from typing import Any

from summaries.core.extract import (
    MAX_INPUT_CHARS,
    count_user_turns,
    excerpt,
    extract_turns,
    last_activity_ts,
    render_bounded_input,
    render_input,
)
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries.extract_helpers import a, u
from transcripts.core.user_turns import is_user_turn

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
    assert count_user_turns(extract_turns(records)) == sum(map(is_user_turn, records)) == 2


def test_last_activity_ts() -> None:
    assert last_activity_ts([]) is None
    turns = extract_turns([u("a", "t1"), a("b", "t2"), u("c", ""), a("d")])
    assert last_activity_ts(turns) == "t2"


def test_render_input_format() -> None:
    turns = extract_turns(
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
