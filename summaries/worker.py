"""The embedded profile's summary worker: turn ends queue their pass here and answer at once.

Without a broker, Celery's eager mode ran the pass inside the ``turns/end`` request (89 s
on a 100 MB session). Here a module-level pool of ``KIROCREW_SUMMARY_WORKERS`` threads
runs the passes after the response instead, behind a bounded queue:

* at most one *queued* pass per slot: a pass reads the transcript as it is when it
  starts, so a second turn end arriving before the first pass started adds nothing
  (coalesced); one arriving while a pass runs queues the next pass, which sees the rows
  the running one missed;
* at most ``KIROCREW_SUMMARY_QUEUE`` queued slots; beyond that a turn end that came from
  a request drops its pass (logged; the summary stays as it was and the next turn end, or
  POST, retries: the pass is idempotent on the transcript's identity). Outside a request
  (``import_transcripts``, its ``--follow`` loop, a shell) the caller waits for room
  instead: an import of 500 sessions asks for 500 passes and gets them all, at the pace
  the workers run them.

The thread count never grows with the load, so turn ends cannot pile up threads.

"After the response" is literal: a pass queued while a request is being served (Django's
``request_started`` opens the hold on the thread that serves it: the turn end route, whose
``turn_ended`` receiver queues the pass) is handed to the pool only when that thread's
response is closed (``request_finished``, sent after the last byte went out, under WSGI
and ASGI alike, on the thread that ran the view), so the pass cannot compete for the
interpreter with the request it follows, and no route has to know that it queues one.
``summary_worker_hold()`` opens the same hold explicitly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections

log = logging.getLogger(__name__)

_lock = threading.Condition()
_pending: set[str] = set()  # slots with a queued pass that has not started yet
_outstanding = 0  # queued + running passes, for summary_worker_drain()
_executor: ThreadPoolExecutor | None = None
_held = threading.local()  # per request thread: hold depth, passes awaiting the response
_given_up = False  # summary_worker_settle(give_up=True): queued passes end unstarted


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(
            max_workers=max(1, settings.KIROCREW_SUMMARY_WORKERS),
            thread_name_prefix="summary-pass",
        )
    return _executor


@contextmanager
def summary_worker_hold() -> Iterator[None]:
    """Passes submitted inside wait for this thread's response to be closed."""
    _held.depth = getattr(_held, "depth", 0) + 1
    try:
        yield
    finally:
        _held.depth -= 1


def summary_worker_request(**_kwargs: Any) -> None:
    """``request_started``: hold this thread's passes until its response is closed.

    Passes a previous request on this thread still held (its response never closed, as
    when a client goes away mid-response) are submitted first, never dropped.
    """
    summary_worker_release()
    _held.request = True


def summary_worker_release(**_kwargs: Any) -> None:
    """``request_finished``: submit the passes this thread's request held back."""
    _held.request = False
    waiting: list[tuple[str, Callable[[str], Any]]] = getattr(_held, "waiting", [])
    _held.waiting = []
    for slot_name, run in waiting:
        summary_submit(slot_name, run, wait=False)  # after the response, on a server thread


request_started.connect(summary_worker_request, dispatch_uid="summaries.worker.request")
request_finished.connect(summary_worker_release, dispatch_uid="summaries.worker.release")


# How long a caller outside a request waits for room in a full queue before dropping.
QUEUE_WAIT_S = 600.0


def _may_wait() -> bool:
    """Whether this thread may block on a full queue: not a request's (its passes are
    submitted after its response, and a server thread must not stall), not a pass worker
    (it would wait on itself), not one running an event loop."""
    if getattr(_held, "request", False) or threading.current_thread().name.startswith(
        "summary-pass"
    ):
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def summary_submit(slot_name: str, run: Callable[[str], Any], *, wait: bool | None = None) -> bool:
    """Queue ``run(slot_name)`` on the worker; False when coalesced or dropped.

    ``wait``: block while the queue is full (default: only outside a request, see
    ``_may_wait``)."""
    global _outstanding
    if getattr(_held, "depth", 0) or getattr(_held, "request", False):
        waiting = _held.waiting = getattr(_held, "waiting", [])
        if all(name != slot_name for name, _ in waiting):
            waiting.append((slot_name, run))
        return True
    with _lock:
        if slot_name in _pending:
            log.debug("Session summary for %s already queued: coalesced", slot_name)
            return False
        limit = max(1, settings.KIROCREW_SUMMARY_QUEUE)
        if len(_pending) >= limit:
            patient = _may_wait() if wait is None else wait
            if not (patient and _lock.wait_for(lambda: len(_pending) < limit, QUEUE_WAIT_S)):
                log.warning("Session summary queue full: pass for %s dropped", slot_name)
                return False
            if slot_name in _pending:  # queued by someone else while this one waited
                return False
        _pending.add(slot_name)
        _outstanding += 1
    loop = _main_loop()
    try:
        _pool().submit(_job, slot_name, run, loop)
    except RuntimeError:  # the pool is shutting down (interpreter exit)
        with _lock:
            _pending.discard(slot_name)
            _outstanding -= 1
            _lock.notify_all()
        return False
    return True


def _main_loop() -> Any:
    """The server's event loop when called from a request under daphne, else None.

    The pass pushes its frames with ``async_to_sync``; from a thread of our own that
    would spin a private loop, and the in-memory channel layer's queues belong to the
    server's loop (a put from another loop may not wake its reader). Handing the server's
    loop to the worker thread makes the push hop onto it, as it did from the request.
    """
    if getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None) != os.getpid():
        return None
    return getattr(SyncToAsync.threadlocal, "main_event_loop", None)


def _job(slot_name: str, run: Callable[[str], Any], loop: Any) -> None:
    global _outstanding
    with _lock:
        _pending.discard(slot_name)  # from now on a turn end queues the next pass
        _lock.notify_all()  # room in the queue for a caller waiting on it
    alive = loop is not None and not loop.is_closed()
    if alive:
        SyncToAsync.threadlocal.main_event_loop = loop
        SyncToAsync.threadlocal.main_event_loop_pid = os.getpid()
    try:
        if _given_up:
            log.info(
                "Session summary for %s given up (interrupted): the next turn end or a POST runs it",
                slot_name,
            )
            return
        close_old_connections()  # inside: whatever fails here, the pass is accounted for
        run(slot_name)
    except Exception:  # the pass contains its own failures; this is the last guard
        log.warning("Session summary worker failed for %s", slot_name, exc_info=True)
    finally:
        # This thread's connection is its own: close it, or each worker holds one open.
        connections.close_all()
        if alive:
            del SyncToAsync.threadlocal.main_event_loop
            del SyncToAsync.threadlocal.main_event_loop_pid
        with _lock:
            _outstanding -= 1
            _lock.notify_all()


def summary_worker_pending() -> int:
    """Queued + running passes (for tests and diagnostics)."""
    with _lock:
        return _outstanding


def summary_worker_drain(timeout: float | None = 60.0) -> bool:
    """Wait until every queued and running pass has finished; False on timeout."""
    with _lock:
        return _lock.wait_for(lambda: _outstanding == 0, timeout=timeout)


def summary_worker_settle(*, give_up: bool) -> None:
    """Before a command that queued passes returns: wait for them all, or (``give_up``,
    after Ctrl-C) only for the running ones, the queued ones ending unstarted (a pass is
    idempotent on the transcript's identity: the next turn end or a POST runs it).

    A pass left running into the interpreter's exit can no longer push its frames
    (``async_to_sync`` needs an executor, and executors refuse work once exit began):
    each push failed with a traceback after ``import_transcripts`` had printed its
    summary line, and the command sat silent while the rest ran.
    """
    global _given_up
    with _lock:
        left = _outstanding
    if not left:
        return
    if give_up:
        _given_up = True
    else:
        log.info("Summarizing: waiting for %d summary pass(es) this run queued", left)
    try:
        summary_worker_drain(timeout=None)
    finally:
        _given_up = False
