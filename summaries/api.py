"""Summary routes. GET never generates. POST asks for a forced pass: a refusal the slot's
state already decides is its 409 at once; else the pass is queued and the answer is 202
("generating"). Only the ``inline`` dispatch (tests) runs the pass in the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from kirocrew_site.auth import caller_of
from transcripts.api import ERRORS, ApiError, slot_for_caller, slot_gone, slot_not_found
from transcripts.core.keys import is_valid_slot_name

from .core.gate import GenerateState, PassOutcome, PassResult, should_summarize
from .core.intents import Intent
from .runtime import summary_config
from .selectors import slot_for_summary_read, slot_view, summary_body
from .services import CLEARED, summary_clear_beyond, summary_generate
from .tasks import DispatchMode, dispatch_mode, summary_dispatch

router = Router(tags=["turns and summaries"])


class SummaryOut(Schema):
    """A slot's summary: its intents (the payload model, ``summaries.core.intents``), the
    project notes, and when and from how many user turns it was written."""

    enabled: bool
    stale: bool
    intents: list[Intent]
    constraints: list[str]
    generated_at: float | None
    user_turns: int | None
    last_activity: str | None
    generate_state: GenerateState
    covers_through_turn: int | None
    new_turns: int | None
    model: str | None


@router.get(
    "/slots/{slot}/summary", response={200: SummaryOut, **ERRORS}, operation_id="summary_get"
)
def get_summary(request: HttpRequest, slot: str) -> dict[str, Any]:
    caller = caller_of(request)
    # The polled read: one precompiled query, then the shared ownership check on it.
    found = slot_for_summary_read(slot) if is_valid_slot_name(slot) else None
    return summary_body(slot_for_caller(caller, slot, operation="slot_summary_read", found=found))


Refusal = tuple[int, str, str]  # HTTP status, error code, message
_UNAVAILABLE: Refusal = (409, "summary_unavailable", "could not summarize this session")
_TURN_RUNNING: Refusal = (409, "summary_turn_running", "this session has a turn in progress")
_BUSY: Refusal = (409, "summary_busy", "a write to this session is in progress; try again")
_BAD_REPLY: Refusal = (
    409,
    "summary_bad_reply",
    "the model's reply was not a usable summary; the previous summary is kept",
)
_MODEL_FAILED: Refusal = (409, "summary_model_failed", "the summary model failed")
# What the POST answers for every way a pass can end without a summary (one row per
# PassResult member); each cause its own code or message: "try again" is true of some only.
REFUSALS: Mapping[PassResult, Refusal] = {
    PassResult.DISABLED: (409, "summary_disabled", "session summaries are switched off"),
    PassResult.IN_FLIGHT: (409, "summary_in_flight", "a summary is already being written"),
    # Only a turn end's pass is ever superseded, never the POST's forced one.
    PassResult.SUPERSEDED: (409, "summary_in_flight", "a summary is already being written"),
    PassResult.MEMORY_MODE: (
        409,
        "summary_unavailable",
        "this session's memory mode does not allow summaries",
    ),
    PassResult.RUNNING: _TURN_RUNNING,
    PassResult.STOP_REASON: (409, "summary_unavailable", "the last turn did not end cleanly"),
    PassResult.TOO_FEW_TURNS: (
        409,
        "summary_too_few_turns",
        "the session has too few user turns to summarize yet",
    ),
    PassResult.CADENCE: (409, "summary_unavailable", "the summary is recent enough"),
    PassResult.BACKING_OFF: (
        409,
        "summary_backing_off",
        "the model's last reply was unusable; summaries of this session pause for a while",
    ),
    PassResult.DIRTY: _BUSY,
    PassResult.SLOT_NOT_FOUND: _UNAVAILABLE,  # answered 404 by slot_gone first
    PassResult.NO_TRANSCRIPT: (409, "summary_unavailable", "no conversation log"),
    PassResult.BACKEND_ERROR: _MODEL_FAILED,
    PassResult.UNUSABLE_REPLY: _BAD_REPLY,
    PassResult.DISCARDED_RUNNING: _TURN_RUNNING,
    PassResult.DISCARDED_DIRTY: _BUSY,
    PassResult.WRITE_REFUSED: (
        409,
        "summary_busy",
        "the session changed while it was being summarized; try again",
    ),
    PassResult.ERROR: (
        409,
        "summary_unavailable",
        "could not summarize this session (see the server log)",
    ),
}
# BACKEND_ERROR by its BackendError type: whether waiting helps, and where to look.
BACKEND_REFUSALS: Mapping[str, Refusal] = {
    "BackendTimeout": (
        409,
        "summary_model_failed",
        "the summary model did not answer in time; try again once it is less busy",
    ),
    "BackendUnavailable": (
        409,
        "summary_model_failed",
        "the summary model's server could not be reached; check that it is running",
    ),
    "BackendHTTPError": (
        409,
        "summary_model_failed",
        "the summary model's server refused the request; see the server log",
    ),
    "BackendContextOverflow": (
        409,
        "summary_model_failed",
        "the session is too long for the summary model's context window, even shortened",
    ),
    "BackendBadReply": _BAD_REPLY,
    "BackendRunaway": (
        409,
        "summary_bad_reply",
        "the model's reply ran to its length limit without a usable summary",
    ),
}


def refusal_for(outcome: PassOutcome) -> Refusal:
    """The POST's answer for a pass that stored nothing."""
    if outcome.reason is PassResult.BACKEND_ERROR and outcome.detail in BACKEND_REFUSALS:
        return BACKEND_REFUSALS[outcome.detail]
    return REFUSALS[outcome.reason]


@router.post(
    "/slots/{slot}/summary",
    response={200: SummaryOut, 202: SummaryOut, **ERRORS},
    operation_id="summary_generate",
)
def generate_summary(request: HttpRequest, slot: str) -> Any:
    found = slot_for_caller(caller_of(request), slot, operation="slot_summary_generate")
    if dispatch_mode() is not DispatchMode.INLINE:
        # What the slot's state already decides is answered now, by the gate the pass asks.
        refusal = should_summarize(
            summary_config(), slot_view(found), found.session.user_turns, force=True
        )
        if refusal is not None:
            if refusal.reason is PassResult.TOO_FEW_TURNS and summary_clear_beyond(found):
                found.refresh_from_db()
                return 200, summary_body(found)  # a rewind left too few turns: cleared
            raise ApiError(*REFUSALS[refusal.reason])
        summary_dispatch(found.name, force=True)
        found.refresh_from_db()
        return 202, summary_body(found)
    # The pass asks the gate (switched off, incognito, running ...): no check of it here.
    outcome = summary_generate(slot_name=found.name, force=True)
    if outcome.reason is PassResult.TOO_FEW_TURNS and outcome.detail == CLEARED:
        found.refresh_from_db()
        return summary_body(found)  # a rewind left too few turns: the summary was cleared
    if not outcome.ok:
        # A DELETE that won the race shows as no_transcript, an error or a refused write:
        # the slot is gone, so it is the 404 of a missing slot, not a summary refusal.
        if slot_gone(found):
            raise slot_not_found()
        raise ApiError(*refusal_for(outcome))
    found.refresh_from_db()
    found.session.refresh_from_db()
    body = summary_body(found)  # read back from disk, not the pass's return value
    if not body["intents"]:  # switched off meanwhile too: a body with intents is enabled
        raise slot_not_found() if slot_gone(found) else ApiError(*_UNAVAILABLE)
    return body
