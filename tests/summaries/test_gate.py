"""The summary gate: reason order, force matrix, the outcome enum, generate_state."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from summaries.core.config import SessionSummaryConfig
from summaries.core.gate import (
    PassOutcome,
    PassResult,
    SlotView,
    generate_state,
    should_summarize,
)

ON = SessionSummaryConfig(enabled=True, min_user_turns=2, regenerate_after_turns=3)
OFF = SessionSummaryConfig(enabled=False)
CLEAN = SlotView(
    in_flight=False,
    memory_mode="persistent",
    running=False,
    last_stop_reason="end_turn",
    summary_turn_mark=0,
)


def verdict(*args: Any, **kwargs: Any) -> str:
    """``should_summarize`` in its log form: "" to proceed, else the refusal's label."""
    out = should_summarize(*args, **kwargs)
    assert out is None or isinstance(out.reason, PassResult)
    return "" if out is None else out.label


def slot(**changes: Any) -> SlotView:
    return replace(CLEAN, **changes)


def test_clean_slot_proceeds() -> None:
    assert verdict(ON, CLEAN, 5) == ""
    assert verdict(ON, CLEAN, None) == ""


def test_disabled_costs_nothing() -> None:
    assert verdict(OFF, CLEAN, 10) == "disabled"


def test_full_order() -> None:
    # Every gate failing at once; peel them off one by one in the reference order.
    worst = slot(
        in_flight=True,
        memory_mode="incognito",
        running=True,
        last_stop_reason="timeout",
        summary_turn_mark=4,
    )
    steps = [
        (OFF, worst, "disabled"),
        (ON, worst, "memory_mode"),
        (ON, replace(worst, in_flight=False, memory_mode="default"), "running"),
        (
            ON,
            replace(worst, in_flight=False, memory_mode="default", running=False),
            "stop_reason:timeout",
        ),
    ]
    for cfg, view, reason in steps:
        assert verdict(cfg, view, 1) == reason
    ready = replace(
        worst, in_flight=False, memory_mode="default", running=False, last_stop_reason="end_turn"
    )
    assert verdict(ON, ready, 1) == "too_few_turns"
    assert verdict(ON, ready, 5) == "cadence"  # 5 - 4 < 3
    assert verdict(ON, ready, 7) == ""


def test_a_pass_in_flight_refuses_nothing_here_the_claim_does() -> None:
    busy = slot(in_flight=True)
    assert verdict(ON, busy, 5) == ""
    assert verdict(OFF, busy, 5) == "disabled"
    assert verdict(ON, slot(in_flight=True, running=True), 5) == "running"


@pytest.mark.parametrize(
    ("mode", "blocked"),
    [
        ("incognito", True),
        ("temporary", True),
        ("INCOGNITO", True),
        ("Temporary", True),
        (" incognito", False),  # not stripped
        ("incognito ", False),
        ("persistent", False),
        ("default", False),
        ("", False),
    ],
)
def test_memory_mode(mode: str, blocked: bool) -> None:
    assert (verdict(ON, slot(memory_mode=mode), 5) == "memory_mode") is blocked


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", ""),
        ("", "stop_reason:missing"),
        ("timeout", "stop_reason:timeout"),
        ("cancel-unacked", "stop_reason:cancel-unacked"),
        ("tool-stall", "stop_reason:tool-stall"),
        ("stale-recover", "stop_reason:stale-recover"),
        ("max_tokens", "stop_reason:max_tokens"),
        ("END_TURN", "stop_reason:END_TURN"),  # exactly end_turn, nothing else
    ],
)
def test_stop_reason(reason: str, expected: str) -> None:
    assert verdict(ON, slot(last_stop_reason=reason), 5) == expected


def test_stop_reason_checked_in_cheap_gate() -> None:
    assert verdict(ON, slot(last_stop_reason=""), None) == "stop_reason:missing"


def test_user_turns_none_stops_before_counts() -> None:
    assert verdict(ON, slot(summary_turn_mark=99), None) == ""


@pytest.mark.parametrize(("turns", "expected"), [(0, "too_few_turns"), (1, "too_few_turns")])
def test_too_few_turns(turns: int, expected: str) -> None:
    assert verdict(ON, CLEAN, turns) == expected


@pytest.mark.parametrize(
    ("mark", "turns", "expected"),
    [
        (0, 2, ""),  # no pass yet: a falsy mark never blocks
        (2, 2, "cadence"),
        (2, 4, "cadence"),
        (2, 5, ""),  # exactly regenerate_after_turns later
        (2, 9, ""),
        (9, 3, "cadence"),  # mark ahead of the count (a rewind): negative gap still waits
    ],
)
def test_cadence(mark: int, turns: int, expected: str) -> None:
    assert verdict(ON, slot(summary_turn_mark=mark), turns) == expected


def test_cadence_one_regenerates_every_turn() -> None:
    cfg = SessionSummaryConfig(enabled=True)
    assert verdict(cfg, slot(summary_turn_mark=3), 3) == "cadence"
    assert verdict(cfg, slot(summary_turn_mark=3), 4) == ""


# force lifts exactly stop_reason and cadence
@pytest.mark.parametrize(
    ("cfg", "view", "turns", "reason"),
    [
        (OFF, CLEAN, 5, "disabled"),
        (ON, slot(memory_mode="temporary"), 5, "memory_mode"),
        (ON, slot(running=True), 5, "running"),
        (ON, CLEAN, 1, "too_few_turns"),
    ],
)
def test_force_holds(cfg: SessionSummaryConfig, view: SlotView, turns: int, reason: str) -> None:
    assert verdict(cfg, view, turns) == reason
    assert verdict(cfg, view, turns, force=True) == reason


@pytest.mark.parametrize(
    ("view", "turns", "reason"),
    [
        (slot(last_stop_reason="timeout"), 5, "stop_reason:timeout"),
        (slot(last_stop_reason=""), 5, "stop_reason:missing"),
        (slot(summary_turn_mark=4), 5, "cadence"),
        (slot(last_stop_reason="", summary_turn_mark=4), 5, "stop_reason:missing"),
    ],
)
def test_force_lifts(view: SlotView, turns: int, reason: str) -> None:
    assert verdict(ON, view, turns) == reason
    assert verdict(ON, view, turns, force=True) == ""


def test_force_with_unclean_stop_still_needs_turns() -> None:
    view = slot(last_stop_reason="")
    assert verdict(ON, view, 1, force=True) == "too_few_turns"


# --- generate_state ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cfg", "view", "turns", "state"),
    [
        (ON, CLEAN, 5, "ready"),
        (ON, CLEAN, 2, "ready"),
        (ON, CLEAN, 1, "too_few_turns"),
        (ON, CLEAN, 0, "too_few_turns"),
        (OFF, CLEAN, 5, "unavailable"),
        (OFF, CLEAN, 0, "unavailable"),
        (ON, slot(in_flight=True), 5, "generating"),
        (ON, slot(memory_mode="Incognito"), 5, "unavailable"),
        (ON, slot(memory_mode="temporary"), 0, "unavailable"),
        (ON, slot(running=True), 5, "ready"),  # the panel disables from its live signal
        (ON, slot(last_stop_reason=""), 5, "ready"),
        (ON, slot(summary_turn_mark=5), 5, "ready"),
        (ON, CLEAN, None, "ready"),
    ],
)
def test_generate_state(
    cfg: SessionSummaryConfig, view: SlotView, turns: int | None, state: str
) -> None:
    assert generate_state(cfg, view, turns) == state


def test_slot_view_is_frozen() -> None:
    with pytest.raises(AttributeError):
        CLEAN.running = True  # type: ignore[misc]


# --- the outcome enum ----------------------------------------------------------------


def test_refusals_are_enum_members_with_the_detail_apart() -> None:
    assert should_summarize(ON, CLEAN, 5) is None
    assert should_summarize(OFF, CLEAN, 5) == PassOutcome(PassResult.DISABLED)
    stopped = should_summarize(ON, slot(last_stop_reason="timeout"), 5)
    assert stopped == PassOutcome(PassResult.STOP_REASON, "timeout")
    assert stopped is not None
    assert stopped.reason is PassResult.STOP_REASON
    assert (stopped.ok, stopped.detail, stopped.label) == (False, "timeout", "stop_reason:timeout")


def test_only_stored_and_current_are_ok() -> None:
    assert {r for r in PassResult if r.ok} == {PassResult.STORED, PassResult.CURRENT}
    assert PassOutcome(PassResult.CURRENT, announce=True) == PassOutcome(PassResult.CURRENT)


def test_an_outcome_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError, match="PassResult"):
        PassOutcome("stored")  # type: ignore[arg-type]
