"""``core.fanout``: every item once, failures missing, and no worker outlives its caller.

Real forked processes and real SIGKILLs: a worker that held its own pipe's read end
blocked forever on a full pipe once the importer was killed (the bulk kill test hung).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.transcripts.helpers import live_children, process_alive
from transcripts.core.fanout import fan_out

ROOT = Path(__file__).resolve().parents[2]


def _square(n: int) -> int:
    if n == 13:
        raise ValueError("thirteen")
    return n * n


def test_every_item_once_and_a_raising_item_is_missing() -> None:
    items = list(range(200))
    results = list(fan_out(_square, items, 2))
    indices = [index for index, _ in results]
    assert sorted(indices) == [n for n in items if n != 13]  # each once, 13 raised
    assert all(value == items[index] ** 2 for index, value in results)


def _pid_after_a_pause(_: int) -> int:
    time.sleep(0.01)
    return os.getpid()


def test_results_come_from_more_than_one_worker() -> None:
    pids = {pid for _, pid in fan_out(_pid_after_a_pause, range(40), 2)}
    assert len(pids) == 2
    assert os.getpid() not in pids


def test_a_killed_worker_ends_the_run_with_what_the_others_did() -> None:
    def slow(n: int) -> int:
        time.sleep(0.02)
        return os.getpid()

    results: list[tuple[int, int]] = []
    victim = 0
    for index, pid in fan_out(slow, range(60), 2):  # ends: no wait for the dead worker
        results.append((index, pid))
        if not victim:
            victim = pid
            os.kill(victim, signal.SIGKILL)
    indices = [index for index, _ in results]
    assert len(indices) == len(set(indices))  # nothing twice
    assert len(indices) >= 59  # only the item in its hands is missing: the queued one moved
    # its first result, and at most one more that was already in the pipe
    assert sum(1 for _, pid in results if pid == victim) <= 2


def test_no_items_no_wait() -> None:
    assert list(fan_out(_square, [], 2)) == []


def _sleepy(n: int) -> int:
    time.sleep(0.01)
    return n


@pytest.mark.parametrize("seed", range(12))
def test_a_worker_killed_at_any_moment_never_stalls_the_run(seed: int) -> None:
    """Killed at a random moment (in a call, between items, in mid-send): the run ends,
    nothing comes twice, and only the item in the dead worker's hands is missing."""
    rng = random.Random(seed)
    before = live_children()  # a fixture's server, say: never this test's to kill

    def kill_one() -> None:
        with contextlib.suppress(IndexError, ProcessLookupError):
            os.kill(rng.choice(sorted(live_children() - before)), signal.SIGKILL)

    killer = threading.Timer(rng.uniform(0.0, 0.2), kill_one)
    killer.start()
    indices = [index for index, _ in fan_out(_sleepy, range(40), 2)]
    killer.join()
    assert len(indices) == len(set(indices))
    assert len(indices) >= 39


def test_both_workers_killed_ends_the_run() -> None:
    before = live_children()
    results = fan_out(_sleepy, range(1000), 2)
    first = next(results)
    for pid in live_children() - before:
        os.kill(pid, signal.SIGKILL)
    rest = list(results)  # ends: no worker is left to wait for
    assert len(rest) + 1 < 1000
    assert first[0] not in [index for index, _ in rest]


def test_closing_early_stops_the_workers() -> None:
    def slow(n: int) -> int:
        time.sleep(0.05)
        return os.getpid()

    results = fan_out(slow, range(1000), 2)
    workers = {next(results)[1] for _ in range(6)}
    results.close()
    assert not any(process_alive(pid) for pid in workers)


def test_workers_stop_soon_after_their_caller_is_killed(tmp_path: Path) -> None:
    """The caller is SIGKILLed while its workers still have items and full pipes: each
    worker must notice (a failed send, or its parent gone) instead of blocking forever."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from transcripts.core.fanout import fan_out

        def big(n):
            time.sleep(0.005)
            return (os.getpid(), b"x" * 300_000)  # a few results fill a pipe

        for _, (pid, _) in fan_out(big, range(10_000), 2):
            print(pid, flush=True)
            time.sleep(3600)  # the caller stops reading: the workers' pipes fill
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    first = int(proc.stdout.readline())
    time.sleep(0.5)  # both workers blocked on their full pipes by now
    workers = {first} | {
        int(child)
        for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    }
    assert len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(process_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_alive(pid) for pid in workers)


def test_ctrl_c_stops_caller_and_workers_with_one_interruption() -> None:
    """Ctrl-C reaches the whole process group: the workers leave it to their caller,
    which stops them, so the person sees one KeyboardInterrupt, not one per worker."""
    script = textwrap.dedent(
        """
        import os, signal, time
        from transcripts.core.fanout import fan_out

        signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever was inherited

        def slow(n):
            time.sleep(0.05)
            return os.getpid()

        results = fan_out(slow, range(10_000), 2)
        try:
            for _, pid in results:
                print(pid, flush=True)
                time.sleep(0.2)  # the caller's own step: Ctrl-C lands here
        except KeyboardInterrupt:
            time.sleep(1)  # its own clean-up (a rollback, say), the workers still open
            results.close()
            raise
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal gives a command
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    workers = {int(proc.stdout.readline()) for _ in range(3)}
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=10)
    err = proc.stderr.read().decode()
    assert err.count("KeyboardInterrupt") == 1, err
    assert not any(process_alive(pid) for pid in workers)
