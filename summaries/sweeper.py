"""The server's backlog sweeper: a daemon thread that answers an import's request.

Started by the server's first request (``receivers.on_first_request``, embedded executor
only). Every ``TICK_S`` it beats its heartbeat and, when an import asked
(``core.sweep_request``), queues the backlog on this server's workers without waiting:
the import that left those sessions returns at once instead of running their passes.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections

from .core.sweep_request import TICK_S, sweep_request_take, sweeper_beat, sweeper_gone

log = logging.getLogger(__name__)

_started = threading.Event()


def sweep_folder() -> Path:
    return Path(settings.KIROCREW_HOME) / "summaries"


def summary_sweeper_start() -> None:
    """Start the sweeper once per process (its first beat is before this returns)."""
    if _started.is_set():
        return
    _started.set()
    folder = sweep_folder()
    sweeper_beat(folder)
    atexit.register(sweeper_gone, folder)
    threading.Thread(target=_run, args=(folder,), name="summary-sweeper", daemon=True).start()


def _run(folder: Path) -> None:
    from .tasks import summary_backlog_dispatch

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
