"""Whether a summary pass may run, as an auditable reason string rather than a bool.

A feature that silently declines to run is indistinguishable from a broken one, so
every refusal names its cause.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .config import SessionSummaryConfig

INCOGNITO_MEMORY_MODES = frozenset({"incognito", "temporary"})
CLEAN_STOP = "end_turn"

GenerateState = Literal["ready", "too_few_turns", "unavailable"]


@dataclass(frozen=True, slots=True)
class SlotView:
    """The slot state the gate reads, detached from the model that stores it."""

    in_flight: bool
    memory_mode: str
    running: bool
    last_stop_reason: str
    summary_turn_mark: int


def is_restricted(memory_mode: object) -> bool:
    """Whether a memory mode forbids summarizing: the slot's, the API's, or the on-disk one.

    Case-insensitive but not stripped, as in the original: " incognito" is not a mode.
    """
    return str(memory_mode or "").lower() in INCOGNITO_MEMORY_MODES


def should_summarize(
    cfg: SessionSummaryConfig,
    slot: SlotView,
    user_turns: int | None,
    *,
    force: bool = False,
    holding_guard: bool = False,
) -> str:
    """The empty string to proceed, else the first refusal reason in the fixed order.

    ``user_turns=None`` is the cheap pre-I/O check: slot state only. ``force`` (an
    explicit request) lifts exactly the two gates that stand in for consent to spend,
    stop_reason and cadence; ``holding_guard`` is the pass that set the in-flight marker.
    """
    if not cfg.enabled:
        return "disabled"
    if slot.in_flight and not holding_guard:
        return "in_flight"
    if is_restricted(slot.memory_mode):
        return "memory_mode"
    if slot.running:
        # Checked directly: an empty stop reason means both "idle, restored in a later
        # process" and "streaming right now".
        return "running"
    if not force and slot.last_stop_reason != CLEAN_STOP:
        # Fail closed: a turn that died before completing leaves the marker empty.
        return f"stop_reason:{slot.last_stop_reason or 'missing'}"
    if user_turns is None:
        return ""
    if user_turns < cfg.min_user_turns:
        return "too_few_turns"
    mark = slot.summary_turn_mark
    if not force and mark and user_turns - mark < cfg.regenerate_after_turns:
        return "cadence"
    return ""


def generate_state(
    cfg: SessionSummaryConfig, slot: SlotView, user_turns: int | None
) -> GenerateState:
    """Which affordance the panel offers. A running turn is still "ready": this value is
    only refreshed on writes, so a mid-turn verdict would go stale; the POST refuses with
    summary_turn_running instead."""
    if not cfg.enabled or slot.in_flight or is_restricted(slot.memory_mode):
        return "unavailable"
    if user_turns is not None and user_turns < cfg.min_user_turns:
        return "too_few_turns"
    return "ready"
