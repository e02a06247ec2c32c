"""The import's worker processes: a run's new sources read, converted, redacted and
encoded (``core/agents/prepare.py``) in a ``ProcessPoolExecutor``, on every core the
importer may use; each result is written by ``agent_import`` like any other source."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import cast

from ..core.agents.prepare import Job, Prepared, prepare
from ..core.redaction import prefilter
from ..models import App
from ..runtime import get_store
from .importing import import_max_bytes, import_workers

PARALLEL_MIN_FILES = 8  # fewer new sources: the workers' start-up is not worth it


def prepared_in_workers(
    files: list[Path], fmt: str, app: App | None, announce: bool
) -> Iterator[Prepared]:
    """``prepare`` of each new source in worker processes (``import_workers``), each
    result as it comes. A source the worker declined (not a clean new session), whose
    reading raised, or whose worker died is missing: the caller reads it itself."""
    store = get_store()
    job = Job(
        fmt=fmt,
        limit=import_max_bytes(),
        max_bytes=store.max_bytes,
        max_line=store.max_line,
        app_name=app.name if app is not None else None,
        clock=store.clock,
        stamps=announce,
    )
    prefilter.available()  # compiled once here, inherited by every forked worker
    # Forked: the job (a test's clock too) and the settings are inherited, not pickled;
    # only a path goes down and a Prepared comes back.
    pool = ProcessPoolExecutor(
        max_workers=min(import_workers(), len(files)),
        mp_context=get_context("fork"),
        initializer=_worker_start,
        initargs=(job, os.getpid()),
    )
    try:
        for future in as_completed([pool.submit(_prepare, path) for path in files]):
            # An exception: the reading raised, or its worker died (BrokenProcessPool).
            prepared = future.result() if future.exception() is None else None
            if prepared is not None:
                yield prepared
    finally:
        # On any error of the caller's too: nothing queued starts, the workers end.
        pool.shutdown(wait=True, cancel_futures=True)


_job: Job | None = None  # a worker's, set once as it starts


def _worker_start(job: Job, importer: int) -> None:
    global _job
    _job = job
    # Ctrl-C reaches the whole process group: the importer alone answers it (and stops
    # its workers), so the terminal shows one interruption, not one per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(importer,), daemon=True).start()


ORPHAN_CHECK_S = 0.5


def _end_with(importer: int) -> None:
    """A worker whose importer died (SIGKILL: no shutdown reached it) would wait for work
    forever on a queue it holds both ends of: it ends once it is reparented."""
    while os.getppid() == importer:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(0)


def _prepare(path: Path) -> Prepared | None:
    return prepare(path, cast(Job, _job))  # set by _worker_start
