"""extract_turns: assistant excerpts, injected automation rows, resend marking and the
user-turn cap."""

from __future__ import annotations

import pytest

from summaries.core.extract import (
    INJECTED_PREFIXES,
    count_user_turns,
    count_user_turns_in_records,
    excerpt,
    render_input,
)
from tests.summaries.extract_helpers import a, both, u

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
