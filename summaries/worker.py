"""The embedded profile's summary executor: ``KIROCREW_SUMMARY_WORKERS`` child processes
(``summaries.passworker``), fed by one thread each from a fair queue (``core.fairqueue``).

Processes, because a pass is CPU work: in the server's interpreter it held the GIL against
the request threads (one pathological pass made ``/api/health`` take 11.45 s). A request's
pass beyond ``KIROCREW_SUMMARY_QUEUE`` is dropped with a warning (the next turn end, POST
or sweep retries) while a command waits for room. A child killed mid-pass costs that pass.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Hashable
from pathlib import Path

from django.conf import settings

from .core.fairqueue import FairQueue, Job

log = logging.getLogger(__name__)

_cond = threading.Condition()
_queue = FairQueue()
_running: set[str] = set()  # slots whose pass a child runs now
_asked: set[str] = set()  # every slot a pass was asked for in this process (queued or not)
_workers: list[_Worker] = []
_epoch = 0  # bumped by summary_worker_cancel: a job of an older epoch is not reported

# How long a caller outside a request waits for room in a full queue before dropping.
QUEUE_WAIT_S = 600.0


class _Worker(threading.Thread):
    """One child process and the thread that feeds it, one job at a time."""

    def __init__(self, number: int) -> None:
        super().__init__(name=f"summary-worker-{number}", daemon=True)
        self.child: subprocess.Popen[bytes] | None = None

    def run(self) -> None:
        while True:
            job, epoch = _next_job()
            try:
                outcome = self._pass(job, epoch)
            except Exception:  # the queue must keep moving whatever happened here
                log.warning("Summary worker failed for %s", job.slot_name, exc_info=True)
                outcome = None
            _job_done(job, epoch, outcome)

    def _spawn(self) -> subprocess.Popen[bytes]:
        child = self.child
        if child is None or child.poll() is not None:
            child = self.child = subprocess.Popen(
                [sys.executable, "-m", "summaries.passworker"],
                cwd=str(Path(settings.BASE_DIR)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                # Its own session: a Ctrl-C at the terminal is the parent's to handle.
                start_new_session=True,
            )
        return child

    def _pass(self, job: Job, epoch: int) -> str | None:
        child = self._spawn()
        if child.stdin is None or child.stdout is None:  # never: both are pipes
            raise RuntimeError("summary worker started without its pipes")
        try:
            job_line = json.dumps({"slot": job.slot_name, "force": job.force}) + "\n"
            child.stdin.write(job_line.encode())
            child.stdin.flush()
            line = child.stdout.readline()
        except (BrokenPipeError, OSError):
            line = b""
        if not line:
            code = child.wait()
            self.child = None
            if epoch == _epoch:  # not killed by summary_worker_cancel
                log.warning(
                    "Summary worker process ended (exit %s) during the pass for %s: "
                    "the next turn end, POST or sweep runs it again",
                    code,
                    job.slot_name,
                )
            return None
        return str(json.loads(line).get("outcome", ""))

    def kill(self) -> None:
        child = self.child
        if child is not None and child.poll() is None:
            child.kill()


def _next_job() -> tuple[Job, int]:
    with _cond:
        while True:
            job = _queue.pop(busy=_running)
            if job is not None:
                _running.add(job.slot_name)
                _cond.notify_all()  # room in the queue for a caller waiting on it
                return job, _epoch
            _cond.wait()


def _job_done(job: Job, epoch: int, outcome: str | None) -> None:
    with _cond:
        if epoch == _epoch:
            _running.discard(job.slot_name)
        _cond.notify_all()
    if outcome is not None:
        log.debug("Session summary pass for %s: %s", job.slot_name, outcome)


def _ensure_workers() -> None:
    """Their children start at their first job."""
    with _cond:
        while len(_workers) < max(1, settings.KIROCREW_SUMMARY_WORKERS):
            worker = _Worker(len(_workers))
            _workers.append(worker)
            worker.start()


def summary_enqueue(app: Hashable, slot_name: str, *, force: bool = False, wait: bool) -> None:
    """Queue a pass in ``app``'s queue, coalesced with a queued one; dropped when the queue
    is full (``wait``: wait for room first)."""
    _ensure_workers()
    with _cond:
        _asked.add(slot_name)
        if slot_name not in _queue:
            limit = max(1, settings.KIROCREW_SUMMARY_QUEUE)
            if len(_queue) >= limit and not (
                wait and _cond.wait_for(lambda: len(_queue) < limit, QUEUE_WAIT_S)
            ):
                log.warning("Session summary queue full: pass for %s dropped", slot_name)
                return
        _queue.push(app, slot_name, force=force)
        _cond.notify_all()


def summary_worker_asked() -> frozenset[str]:
    """Every slot a pass was asked for in this process, a dropped one too."""
    with _cond:
        return frozenset(_asked)


def summary_worker_pending() -> int:
    with _cond:
        return len(_queue) + len(_running)


def summary_worker_drain(timeout: float | None = 60.0) -> bool:
    """Wait until every queued and running pass has finished; False on timeout."""
    with _cond:
        return _cond.wait_for(lambda: not _queue and not _running, timeout=timeout)


def summary_worker_cancel() -> None:
    """Forget the queued passes and kill the running ones' children (a pass is
    idempotent; the sweep queues whatever is left)."""
    global _epoch
    with _cond:
        _queue.clear()
        _running.clear()
        _epoch += 1
        for worker in _workers:
            worker.kill()
        _cond.notify_all()


def summary_worker_settle() -> None:
    """Wait for every pass a command queued; a Ctrl-C stops them and is re-raised (short
    waits, to see it soon)."""
    left = summary_worker_pending()
    if not left:
        return
    log.info("Summarizing: waiting for %d summary pass(es) (Ctrl-C stops them)", left)
    try:
        while not summary_worker_drain(timeout=0.2):
            pass
    except KeyboardInterrupt:
        summary_worker_cancel()
        raise


def _stop_children() -> None:
    """At exit: close the children's input, so each ends after its current pass."""
    for worker in _workers:
        child = worker.child
        if child is not None and child.stdin is not None:
            with contextlib.suppress(OSError):
                child.stdin.close()


atexit.register(_stop_children)
