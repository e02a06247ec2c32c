"""One function over many items in forked worker processes, each result as it comes.

Why not ``multiprocessing.Pool``: its three handler threads cost the caller about 1 ms
of CPU per task (the worker handler wakes on every result that waits in the pipe and
re-registers its selectors until the result thread has read it). For the bulk import
that was 0.4 CPU-s of 500 files, taken from the two cores the workers need. Here each
worker takes the next item from a shared counter and sends its result down a pipe of
its own; the caller waits on those pipes, with no thread of its own.

The workers are forked: ``fn``, ``items`` and whatever they reach are inherited, never
pickled (only results cross a pipe). An item whose call raised, or that a worker had
taken when it died (killed, out of memory), is missing from the results: callers
treat a missing item as "not done here".
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Generator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


def fan_out(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Generator[tuple[int, R]]:
    """``(index, fn(items[index]))`` for each item, in the order they finish.

    Closing the generator early terminates the workers: a caller that may raise while
    iterating holds it in ``contextlib.closing`` (a traceback would keep it, and the
    workers, alive)."""
    context = multiprocessing.get_context("fork")
    counter = context.Value("q", 0)
    readers: list[Connection] = []
    procs: list[Any] = []
    # Frozen while forking: the workers' collections never walk (and so never copy)
    # the whole inherited heap page by page.
    gc.freeze()
    try:
        try:
            for _ in range(workers):
                reader, writer = context.Pipe(duplex=False)
                args = (fn, items, counter, writer, [*readers, reader], os.getpid())
                proc = context.Process(target=_serve, args=args)
                proc.daemon = True
                proc.start()
                writer.close()  # before the next fork: only its worker holds it, so EOF
                readers.append(reader)  # says that worker is gone
                procs.append(proc)
        finally:
            gc.unfreeze()
        live = list(readers)
        while live:
            for ready in wait(live):
                reader = cast(Connection, ready)  # wait answers the objects it was given
                try:
                    yield reader.recv()
                except (EOFError, OSError):  # gone; OSError: it died in mid-message
                    live.remove(reader)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # only when the caller stopped early
        for proc in procs:
            proc.join()
        for reader in readers:
            reader.close()


def _serve(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    counter: Any,
    out: Connection,
    readers: list[Connection],
    parent: int,
) -> None:
    # The read ends (its own, the earlier workers') came with the fork: closed, so that a
    # caller killed with SIGKILL leaves every worker's pipe without a reader (its next
    # send fails) instead of a worker blocked on a full pipe forever.
    for reader in readers:
        reader.close()
    # Ctrl-C reaches the whole process group: the caller alone answers it (and stops its
    # workers), so the terminal shows one interruption, not one traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker lives for one run and the callers' work makes no reference cycles: its
    # many small containers are freed by their counts, and the collector's generation
    # passes over them (and over the inherited heap) are pure cost.
    gc.disable()
    with contextlib.suppress(BrokenPipeError), out:  # the caller is gone: stop quietly
        while os.getppid() == parent:  # an orphan stops at its next item
            with counter.get_lock():
                index = counter.value
                counter.value = index + 1
            if index >= len(items):
                return
            try:
                result = fn(items[index])
            except Exception:  # noqa: S112 - the item is "not done here" (module doc)
                continue
            out.send((index, result))
