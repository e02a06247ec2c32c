"""Receivers of ``transcripts.signals`` (connected in ``SummariesConfig.ready``, so
transcripts never imports summaries), and the server's backlog sweeper.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.signals import request_started
from django.db import close_old_connections

from .core.sweep_request import (
    TICK_S,
    sweep_request,
    sweep_request_take,
    sweeper_alive,
    sweeper_beat,
    sweeper_gone,
)
from .selectors import summary_backlog
from .state import summary_state_reap, summary_turn_mark_clamp
from .tasks import DispatchMode, dispatch_mode, summary_backlog_dispatch, summary_dispatch
from .worker import summary_worker_asked, summary_worker_cancel, summary_worker_settle

log = logging.getLogger(__name__)


def on_turn_ended(sender: Any, *, slot_name: str, **_: Any) -> None:
    """A turn end (the turn API's or an import's), or ``summary_wanted``: queue the pass,
    which asks the gate on its executor, never on the request's thread. A failure here is
    logged and never fails the sender, nor the receivers after this one."""
    try:
        summary_dispatch(slot_name)
    except Exception:
        log.warning("Session summary dispatch failed for %s", slot_name, exc_info=True)


def on_session_rewritten(sender: Any, *, slot_name: str | None, reason: str, **_: Any) -> None:
    """A rewind removed turns: a turn mark ahead of the count (cadence would hold passes
    back until the count caught up) is reset, and a pass is queued (it summarizes what is
    left, or removes the summary of turns that are gone)."""
    if reason != "rewind" or not slot_name:
        return
    try:
        summary_turn_mark_clamp(slot_name)
        summary_dispatch(slot_name)
    except Exception:
        log.warning("Session summary after the rewind of %s failed", slot_name, exc_info=True)


def on_session_deleted(sender: Any, *, slot_name: str, **_: Any) -> None:
    """Reap a state row a pass created while the delete ran (the cascade took the rest)."""
    try:
        reaped = summary_state_reap()
    except Exception:  # a receiver never raises into the sender
        log.warning("Summary state reaping failed after %s was deleted", slot_name, exc_info=True)
        return
    if reaped:
        log.info("Summary state of %s deleted slot(s) reaped (last: %s)", reaped, slot_name)


def on_import_finished(sender: Any, *, interrupted: bool, **_: Any) -> None:
    """``import_transcripts`` is returning. Interrupted: its passes stop now. Embedded
    executor: wait for the passes of the sessions THIS run touched, and hand the rest of
    the backlog (an earlier, killed run's) to the running server without waiting. Celery:
    queue the whole backlog."""
    mode = dispatch_mode()
    if interrupted:
        summary_worker_cancel()
        return
    if mode is DispatchMode.INLINE:
        return  # every turn end's pass already ran in the import itself
    if mode is DispatchMode.CELERY:
        summary_backlog_dispatch(wait=False)
        return
    mine = summary_worker_asked()
    # A turn end's pass dropped by a full queue is queued again here, waiting for room.
    summary_backlog_dispatch(wait=True, only=mine)
    summary_worker_settle()
    # After this run's passes: a server's sweep would otherwise run them a second time.
    count = sum(1 for name in summary_backlog() if name not in mine)
    if not count:
        return
    sessions = "session still needs" if count == 1 else "sessions still need"
    folder = sweep_folder()
    if sweeper_alive(folder, time.time()):
        sweep_request(folder)
        then = "the running server is summarizing them"
    else:
        then = "they will be summarized when the server runs or by the next import"
    log.info("%d earlier %s a summary: %s", count, sessions, then)


def on_first_request(sender: Any, **_: Any) -> None:
    """The server's first request, once: start the sweeper, queue the backlog."""
    request_started.disconnect(dispatch_uid=FIRST_REQUEST_UID)
    if dispatch_mode() is not DispatchMode.PROCESS:
        return  # Celery: a worker's redelivery and the imports' sweep; inline: tests
    try:
        summary_sweeper_start()
        summary_backlog_dispatch(wait=False)
    except Exception:
        log.warning("Summary backlog sweep failed", exc_info=True)


FIRST_REQUEST_UID = "summaries-first-request"


# The server's backlog sweeper (embedded executor): every TICK_S it beats its heartbeat
# and, when an import asked (core.sweep_request), queues the backlog: the import need not wait.
_sweeper_started = threading.Event()


def sweep_folder() -> Path:
    return Path(settings.KIROCREW_HOME) / "summaries"


def summary_sweeper_start() -> None:
    """Once per process; its first beat is before this returns."""
    if _sweeper_started.is_set():
        return
    _sweeper_started.set()
    folder = sweep_folder()
    sweeper_beat(folder)
    atexit.register(sweeper_gone, folder)
    threading.Thread(target=_sweep, args=(folder,), name="summary-sweeper", daemon=True).start()


def _sweep(folder: Path) -> None:
    while True:
        try:
            sweeper_beat(folder)
            if sweep_request_take(folder):
                queued = summary_backlog_dispatch(wait=False)
                log.info("Summary backlog: %d pass(es) queued at an import's request", queued)
        except Exception:  # the sweeper outlives a bad pass of its own
            log.warning("Summary backlog sweep failed", exc_info=True)
        finally:
            close_old_connections()
        time.sleep(TICK_S)
