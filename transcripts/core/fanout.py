"""One function over many items in forked worker processes, each result as it comes.

Why not ``multiprocessing.Pool``: its three handler threads cost the caller about 1 ms
of CPU per task (the worker handler wakes on every result that waits in the pipe and
re-registers its selectors until the result thread has read it). For the bulk import
that was 0.4 CPU-s of 500 files, taken from the two cores the workers need. And a Pool
whose worker is killed waits for that worker's task forever.

Here the caller hands each worker item numbers down a pipe of its own, two at a time (one
in hand, one queued), and reads its answers from another; no thread, no shared lock (a
worker killed while it held one would stall the others for good). A worker answers every
item it takes, so the caller always knows what is in flight.

The workers are forked: ``fn``, ``items`` and whatever they reach are inherited, never
pickled (only results cross a pipe). An item whose call raised, or that was in a
worker's hands when it died (killed, out of memory), is missing from the results:
callers treat a missing item as "not done here".
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import struct
from collections import deque
from collections.abc import Callable, Generator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

_INDEX = struct.Struct("<Q")  # one item number: far below PIPE_BUF, so written whole
_IN_FLIGHT = 2  # items a worker holds at once: one in hand, one queued


class _Feed:
    """The item numbers still to hand out: those a dead worker never started, then the
    ones nobody has had yet."""

    __slots__ = ("count", "following", "spare")

    def __init__(self, count: int) -> None:
        self.count, self.following = count, 0
        self.spare: list[int] = []

    def take(self) -> int | None:
        if self.spare:
            return self.spare.pop()
        if self.following < self.count:
            self.following += 1
            return self.following - 1
        return None

    def give_back(self, index: int) -> None:
        self.spare.append(index)

    def empty(self) -> bool:
        return not self.spare and self.following >= self.count


class _Worker:
    __slots__ = ("answers", "held", "proc", "tasks")

    def __init__(self, proc: Any, tasks: int, answers: Connection) -> None:
        self.proc, self.tasks, self.answers = proc, tasks, answers
        # Items handed over and not answered yet, oldest first: a worker takes them in
        # order, so the first is in its hands and the rest wait in its pipe.
        self.held: deque[int] = deque()

    def close_tasks(self) -> None:
        """EOF on its task pipe: with nothing left in hand, the worker returns. Once
        only: the fd number may belong to another file by the next call."""
        if self.tasks >= 0:
            os.close(self.tasks)
            self.tasks = -1


def fan_out(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Generator[tuple[int, R]]:
    """``(index, fn(items[index]))`` for each item, in the order they finish.

    Closing the generator early terminates the workers: a caller that may raise while
    iterating holds it in ``contextlib.closing`` (a traceback would keep it, and the
    workers, alive)."""
    context = multiprocessing.get_context("fork")
    pool: dict[Connection, _Worker] = {}
    # Frozen while forking: the workers' collections never walk (and so never copy)
    # the whole inherited heap page by page.
    gc.freeze()
    try:
        try:
            for _ in range(workers):
                task_out, task_in = os.pipe()
                answers, answer_in = context.Pipe(duplex=False)
                pool[answers] = _Worker(None, task_in, answers)
                args = (fn, items, task_out, answer_in, list(pool.values()))
                proc = context.Process(target=_serve, args=args, daemon=True)
                proc.start()
                os.close(task_out)  # only its worker reads it
                answer_in.close()  # only its worker writes it: EOF says it is gone
                pool[answers].proc = proc
        finally:
            gc.unfreeze()
        feed = _Feed(len(items))
        for worker in pool.values():
            _top_up(worker, feed)
        _finish_when_done(pool, feed)
        live = list(pool)
        while live:
            for ready in wait(live):
                worker = pool[cast(Connection, ready)]  # wait answers what it was given
                try:
                    index, done, result = worker.answers.recv()
                except (EOFError, OSError):  # gone; OSError: it died in mid-message
                    live.remove(worker.answers)
                    _bury(worker, pool, feed)
                else:
                    worker.held.popleft()
                    _top_up(worker, feed)
                    if done:
                        yield index, result
                _finish_when_done(pool, feed)
    finally:
        for worker in pool.values():
            if worker.proc is not None and worker.held and worker.proc.is_alive():
                worker.proc.terminate()  # only when the caller stopped early
            worker.close_tasks()
        for worker in pool.values():
            if worker.proc is not None:
                worker.proc.join()
            worker.answers.close()


def _top_up(worker: _Worker, feed: _Feed) -> None:
    """Hand ``worker`` items until it holds ``_IN_FLIGHT`` or none are left."""
    while worker.tasks >= 0 and len(worker.held) < _IN_FLIGHT:
        index = feed.take()
        if index is None:
            return
        try:
            os.write(worker.tasks, _INDEX.pack(index))
        except BrokenPipeError:  # the worker is gone: its answers pipe says so next
            feed.give_back(index)
            return
        worker.held.append(index)


def _bury(dead: _Worker, pool: dict[Connection, _Worker], feed: _Feed) -> None:
    """A worker is gone: the item in its hands is missing (it may be what killed it);
    those still queued in its pipe go to the others."""
    dead.close_tasks()
    if dead.held:
        dead.held.popleft()
    for queued in dead.held:
        feed.give_back(queued)
    dead.held.clear()
    for worker in pool.values():
        _top_up(worker, feed)


def _finish_when_done(pool: dict[Connection, _Worker], feed: _Feed) -> None:
    """Nothing left to hand out and nothing in anyone's hands: EOF to every worker, and
    each returns (no item may come back to a worker whose pipe is closed)."""
    if feed.empty() and not any(worker.held for worker in pool.values()):
        for worker in pool.values():
            worker.close_tasks()


def _serve(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    tasks: int,
    out: Connection,
    inherited: list[_Worker],
) -> None:
    # The caller's pipe ends came with the fork: closed, so that the caller's death (even
    # by SIGKILL) leaves this worker's task pipe without a writer (its next read is EOF:
    # an orphan stops at its next item) and its answers pipe without a reader (its next
    # send fails).
    for other in inherited:
        other.close_tasks()
        other.answers.close()
    # Ctrl-C reaches the whole process group: the caller alone answers it (and stops its
    # workers), so the terminal shows one interruption, not one traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker lives for one run and the callers' work makes no reference cycles: its
    # many small containers are freed by their counts, and the collector's generation
    # passes over them (and over the inherited heap) are pure cost.
    gc.disable()
    with contextlib.suppress(BrokenPipeError), out:  # the caller is gone: stop quietly
        while True:
            data = os.read(tasks, _INDEX.size)
            if len(data) < _INDEX.size:
                return  # EOF: nothing more for this worker
            (index,) = _INDEX.unpack(data)
            try:
                answer = (index, True, fn(items[index]))
            except Exception:  # the item is "not done here" (module doc), yet answered
                answer = (index, False, None)
            out.send(answer)
