"""Whether a summary pass may run, and every way a pass ends: one enum. A feature that
silently declines looks broken, so every refusal names its :class:`PassResult`; callers
map the enum, never text (a new one needs its row in ``summaries/api.py``'s table)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from .config import SessionSummaryConfig

INCOGNITO_MEMORY_MODES = frozenset({"incognito", "temporary"})
CLEAN_STOP = "end_turn"

GenerateState = Literal["ready", "generating", "too_few_turns", "unavailable"]


class PassResult(StrEnum):
    """How a summary pass ended. The values are the log lines' words."""

    STORED = "stored"  # a new summary is on disk and mirrored
    CURRENT = "current"  # the stored summary already describes the transcript
    # the gate, in its fixed order
    DISABLED = "disabled"
    SUPERSEDED = "superseded"  # a later turn end's pass, queued after this one, covers it
    IN_FLIGHT = "in_flight"  # the pass: another holds the session's claim
    MEMORY_MODE = "memory_mode"
    RUNNING = "running"
    STOP_REASON = "stop_reason"  # detail: the slot's last stop reason, or "missing"
    TOO_FEW_TURNS = "too_few_turns"
    CADENCE = "cadence"
    # the pass
    BACKING_OFF = "backing_off"  # a recent runaway or bad reply: turn ends wait it out
    DIRTY = "dirty"  # a write holds the slot's lease: nothing spent
    SLOT_NOT_FOUND = "slot_not_found"
    NO_TRANSCRIPT = "no_transcript"
    BACKEND_ERROR = "backend_error"  # detail: the BackendError's type name
    UNUSABLE_REPLY = "unusable_reply"
    DISCARDED_RUNNING = "discarded:running"  # a turn started during the model call
    DISCARDED_DIRTY = "discarded:dirty"  # a write started during the model call
    WRITE_REFUSED = "write_refused"  # the transcript moved since the snapshot
    ERROR = "error"  # unexpected, logged with its traceback

    @property
    def ok(self) -> bool:
        return self in (PassResult.STORED, PassResult.CURRENT)

    @property
    def failed(self) -> bool:
        """Something is wrong, not merely not due: logged at WARNING, not INFO."""
        return self in (PassResult.BACKEND_ERROR, PassResult.UNUSABLE_REPLY, PassResult.ERROR)


@dataclass(frozen=True, slots=True)
class PassOutcome:
    reason: PassResult
    detail: str = ""  # what varies within a reason, e.g. which stop reason
    # Why, for a person: the BackendError's message (written safe to log), for the log
    # line and ``manage.py summarize``; not part of the verdict.
    note: str = field(default="", compare=False)
    # Connected clients should refetch (a summary was written); not part of the verdict.
    announce: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.reason, PassResult):  # a bare string is a bug, not a reason
            raise TypeError(f"PassOutcome.reason must be a PassResult, got {self.reason!r}")

    @property
    def ok(self) -> bool:
        return self.reason.ok

    @property
    def label(self) -> str:
        """The log and command-line form, e.g. ``stop_reason:timeout``."""
        return f"{self.reason}:{self.detail}" if self.detail else str(self.reason)


@dataclass(frozen=True, slots=True)
class SlotView:
    """The slot state the gate reads, detached from the model that stores it."""

    in_flight: bool
    memory_mode: str
    running: bool
    last_stop_reason: str
    summary_turn_mark: int


def is_restricted(memory_mode: object) -> bool:
    """Whether a memory mode forbids summarizing. Case-insensitive, not stripped: " incognito"
    is not a mode."""
    return str(memory_mode or "").lower() in INCOGNITO_MEMORY_MODES


def switched_off(cfg: SessionSummaryConfig) -> PassOutcome | None:
    """The gate's first rule, needing only the config: a queued pass asks it before any
    database or file work, so a switched-off summarizer's pass costs a config read."""
    return None if cfg.enabled else PassOutcome(PassResult.DISABLED)


def should_summarize(
    cfg: SessionSummaryConfig,
    slot: SlotView,
    user_turns: int | None,
    *,
    force: bool = False,
) -> PassOutcome | None:
    """None to proceed, else the first refusal in the fixed order. ``user_turns=None``: the
    cheap pre-I/O check. ``force`` (an explicit request) lifts exactly the two gates that
    stand in for consent to spend, stop_reason and cadence. ``slot.in_flight`` refuses
    nothing here: the pass's claim excludes a second pass (``IN_FLIGHT``)."""
    if (off := switched_off(cfg)) is not None:
        return off
    if is_restricted(slot.memory_mode):
        return PassOutcome(PassResult.MEMORY_MODE)
    if slot.running:
        # Checked directly: an empty stop reason means both "idle, restored in a later
        # process" and "streaming right now".
        return PassOutcome(PassResult.RUNNING)
    if not force and slot.last_stop_reason != CLEAN_STOP:
        # Fail closed: a turn that died before completing leaves the marker empty.
        return PassOutcome(PassResult.STOP_REASON, slot.last_stop_reason or "missing")
    if user_turns is None:
        return None
    if user_turns < cfg.min_user_turns:
        return PassOutcome(PassResult.TOO_FEW_TURNS)
    mark = slot.summary_turn_mark
    if not force and mark and user_turns - mark < cfg.regenerate_after_turns:
        return PassOutcome(PassResult.CADENCE)
    return None


def generate_state(
    cfg: SessionSummaryConfig, slot: SlotView, user_turns: int | None
) -> GenerateState:
    """The panel's affordance. A running turn is still "ready": this is only refreshed on
    writes, so a mid-turn verdict would go stale (the POST refuses it instead)."""
    if not cfg.enabled or is_restricted(slot.memory_mode):
        return "unavailable"
    if slot.in_flight:
        return "generating"  # queued or running: the socket frame / next GET tells the result
    if user_turns is not None and user_turns < cfg.min_user_turns:
        return "too_few_turns"
    return "ready"
