"""Receivers of ``transcripts.signals`` (connected in ``SummariesConfig.ready``).

Every turn end (the turn API's and an import's: imported agent sessions have no turn API)
reaches the summary dispatch here, and every session delete the state reaper, so
transcripts never imports summaries. (WebSocket frames are the realtime app's receivers.)
"""

from __future__ import annotations

import logging
from typing import Any

from .state import summary_state_reap
from .tasks import summary_dispatch
from .worker import summary_worker_settle

log = logging.getLogger(__name__)


def on_turn_ended(sender: Any, *, slot_name: str, **_: Any) -> None:
    """Queue the gated pass. The gate (enabled, stop reason, cadence…) is asked once, by
    the pass, which never runs inside the turn end's request (``tasks.summary_dispatch``,
    ``worker.py``): a switched-off summarizer costs one queued no-op, never a second rule.

    A broker that is down, or an inline pass failing before its own containment, is
    logged and never fails the turn end, nor the receivers after this one.
    """
    try:
        summary_dispatch(slot_name)
    except Exception:
        log.warning("Session summary dispatch failed for %s", slot_name, exc_info=True)


def on_session_deleted(sender: Any, *, slot_name: str, **_: Any) -> None:
    """The slot's state row goes with it (the ORM cascade); one a pass created while the
    delete ran is reaped here, after the delete's commit."""
    try:
        reaped = summary_state_reap()
    except Exception:  # a receiver never raises into the sender
        log.warning("Summary state reaping failed after %s was deleted", slot_name, exc_info=True)
        return
    if reaped:
        log.info("Summary state of %s deleted slot(s) reaped (last: %s)", reaped, slot_name)


def on_import_finished(sender: Any, *, interrupted: bool, **_: Any) -> None:
    """``import_transcripts`` is returning: the passes its turn ends queued on the
    in-process worker finish first (after Ctrl-C, only those already running)."""
    summary_worker_settle(give_up=interrupted)
