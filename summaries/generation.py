"""The pass's model step: which prompt (a full pass or an update of the previous summary),
the model call(s), and the reply parsed, checked against the transcript's rows and
shaped (``core/reply.py``). ``services._run_pass`` calls it between the reads and the
guarded write; nothing here writes.
"""

from __future__ import annotations

import logging

from django.conf import settings

from transcripts.core.store import Identity, TranscriptStore

from .core.backends import BackendContextOverflow, SummaryBackend
from .core.config import SessionSummaryConfig
from .core.intents import StoredSummary, SummaryPayload
from .core.prompt import OVERFLOW_SHRINKS, build_incremental_prompt, build_prompt, shrunk_budget
from .core.reply import shape_reply
from .core.sidecar import read_for_panel, summary_of
from .core.transcript_turn import TranscriptTurn
from .runtime import summary_input_budget

log = logging.getLogger(__name__)


def summary_previous(
    store: TranscriptStore, key: str, identity: Identity, user_turns: int, backend: SummaryBackend
) -> StoredSummary | None:
    """The summary an incremental pass may update, or None for a full pass: one this
    backend wrote for this generation (a rewind or rotation makes a new one) from fewer
    turns, fewer than ``KIROCREW_SUMMARY_FULL_PASS_EVERY - 1`` incremental passes ago.
    A backend that reads the turns rather than the prompt (the heuristic) is always full."""
    if not getattr(backend, "reads_prompt", True):
        return None
    data, _ = read_for_panel(store, key)
    if data is None or data.get("gen") != identity.gen:
        return None
    previous = summary_of(data)
    done = previous.incremental_passes
    if (
        previous.model != backend.name
        or not previous.intents
        or done is None
        or done + 1 >= settings.KIROCREW_SUMMARY_FULL_PASS_EVERY
        or not 0 < (previous.user_turns or 0) < user_turns
    ):
        return None
    return previous


def summary_reply_generate(
    slot_name: str,
    backend: SummaryBackend,
    turns: list[TranscriptTurn],
    user_turns: int,
    cfg: SessionSummaryConfig,
    previous: StoredSummary | None,
) -> tuple[SummaryPayload | None, int]:
    """The model call(s) and the checked payload, with the stored summary's count of
    incremental passes. With ``previous`` the update prompt goes first; a reply the checks
    had to correct is thrown away for a full pass; one it cannot use at all is unusable."""
    if previous is not None:
        since = previous.user_turns or 0
        reply = backend.generate(build_incremental_prompt(previous, turns, since), turns)
        update = _checked_payload(slot_name, reply, turns, user_turns, cfg, previous)
        if update is None:
            return None, 0  # an unusable reply: a second call would pay again for garbage
        if update.checks is None or not update.checks.total():
            return update, (previous.incremental_passes or 0) + 1
        log.info("Session summary update for %s rejected by the checks: full pass", slot_name)
    reply = _full_reply(backend, turns, slot_name)
    return _checked_payload(slot_name, reply, turns, user_turns, cfg, None), 0


def _full_reply(backend: SummaryBackend, turns: list[TranscriptTurn], slot_name: str) -> str:
    """The model's reply to the full-pass prompt.

    The transcript is sized to the model's context window (``summary_input_budget``); a
    server that still refuses it as too long is asked again with a shorter one, a bounded
    number of times (``budget.OVERFLOW_SHRINKS``), so a long session still gets a summary.
    """
    budget = summary_input_budget(backend)
    shrinks = 0
    while True:
        try:
            return backend.generate(build_prompt(turns, budget), turns)
        except BackendContextOverflow:
            smaller = shrunk_budget(budget)
            if smaller is None or shrinks == OVERFLOW_SHRINKS:
                raise
            shrinks += 1
            log.warning(
                "Session summary for %s: the prompt overflowed the model's context window "
                "at %d transcript characters; retrying with %d",
                slot_name,
                budget,
                smaller,
            )
            budget = smaller


def _checked_payload(
    slot_name: str,
    reply: str,
    turns: list[TranscriptTurn],
    user_turns: int,
    cfg: SessionSummaryConfig,
    previous: StoredSummary | None,
) -> SummaryPayload | None:
    """The reply parsed, checked against the transcript's rows and shaped (None:
    unusable); what the checks removed or downgraded is logged and kept with it."""
    shaped = shape_reply(
        reply,
        turns,
        user_turns=user_turns,
        max_intents=cfg.max_intents,
        max_constraints=cfg.max_constraints,
        previous=previous,
        known_constraints=frozenset(previous.constraints if previous else ()),
    )
    if shaped.checks.total():
        log.info("Session summary checks for %s: %s", slot_name, shaped.checks.describe())
    return shaped.payload
