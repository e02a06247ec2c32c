"""``core.fanout.fan_out`` against the stdlib's ``concurrent.futures.ProcessPoolExecutor``
(and ``multiprocessing.Pool.imap_unordered``, report only): could the stock part replace it?

Two measurements, the arms interleaved in one run:

1. The caller's own CPU per item (``RUSAGE_SELF``: what the bulk import's main process,
   which writes every result to the store, loses to the fan-out machinery on a 2-core
   machine), 2 forked workers, N small CPU-bound items (a few ms each on this machine); also the wall time.
2. A worker SIGKILLed after its first result (as the OOM killer does): how many of the N
   items each arm still delivers. ``fan_out`` loses the one item in the dead worker's
   hands; the executor raises ``BrokenProcessPool`` and every pending future fails.

Target (keeping the hand-written module): executor caller CPU / fan_out caller CPU
>= 1.5x, or the executor loses more than one item to the kill.
"""

from __future__ import annotations

import os
import resource
import signal
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from transcripts.core.fanout import fan_out

WORKERS = 2


def work(n: int) -> int:
    """A few ms of CPU: a stand-in for preparing one small source file."""
    total = 0
    for i in range(20_000):
        total += (i * n) % 7
    return total


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_fan_out(items: list[int]) -> Iterable[int]:
    for _, result in fan_out(work, items, WORKERS):
        yield result


def run_executor(items: list[int]) -> Iterable[int]:
    with ProcessPoolExecutor(WORKERS, mp_context=get_context("fork")) as pool:
        for future in as_completed([pool.submit(work, n) for n in items]):
            yield future.result()


def run_pool(items: list[int]) -> Iterable[int]:
    with get_context("fork").Pool(WORKERS) as pool:
        yield from pool.imap_unordered(work, items)


ARMS: dict[str, Callable[[list[int]], Iterable[int]]] = {
    "fan_out": run_fan_out,
    "ProcessPoolExecutor": run_executor,
    "Pool.imap_unordered": run_pool,
}


def measure(arm: Callable[[list[int]], Iterable[int]], items: list[int]) -> tuple[float, float]:
    cpu0, wall0 = _cpu(), time.perf_counter()
    count = sum(1 for _ in arm(items))
    assert count == len(items)
    return _cpu() - cpu0, time.perf_counter() - wall0


def _kill_one_worker() -> None:
    """SIGKILL a worker of the arm in progress (both arms' workers are multiprocessing
    children of this process)."""
    for child in get_context("fork").active_children():
        if child.pid is not None:
            os.kill(child.pid, signal.SIGKILL)
            return
    raise RuntimeError("no worker to kill")


def delivered_after_a_kill(name: str, items: list[int]) -> str:
    got = 0
    try:
        if name == "fan_out":
            for _ in fan_out(work, items, WORKERS):
                got += 1
                if got == 1:
                    _kill_one_worker()
        else:
            with ProcessPoolExecutor(WORKERS, mp_context=get_context("fork")) as pool:
                futures = [pool.submit(work, n) for n in items]
                for future in as_completed(futures):
                    future.result()
                    got += 1
                    if got == 1:
                        _kill_one_worker()
    except BrokenProcessPool:
        return f"{got} of {len(items)}, then BrokenProcessPool"
    return f"{got} of {len(items)}"


def main() -> int:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    items = list(range(args.items))
    cpu: dict[str, list[float]] = {name: [] for name in ARMS}
    wall: dict[str, list[float]] = {name: [] for name in ARMS}
    for _ in range(args.runs):
        for name, arm in ARMS.items():
            c, w = measure(arm, items)
            cpu[name].append(c)
            wall[name].append(w)
    print(
        f"{args.items} small CPU-bound items, {WORKERS} forked workers, median of {args.runs} runs"
    )
    for name in ARMS:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        per_item = c / args.items * 1e6
        print(f"  {name:<22} caller CPU {c:6.3f} s ({per_item:5.0f} us/item)  wall {w:6.3f} s")
    base = statistics.median(cpu["fan_out"])
    ratio = statistics.median(cpu["ProcessPoolExecutor"]) / base
    pool_ratio = statistics.median(cpu["Pool.imap_unordered"]) / base
    wall_ratio = statistics.median(wall["ProcessPoolExecutor"]) / statistics.median(wall["fan_out"])
    print(f"caller CPU, ProcessPoolExecutor / fan_out: {ratio:.2f}x (Pool: {pool_ratio:.2f}x)")
    print(f"wall, ProcessPoolExecutor / fan_out: {wall_ratio:.2f}x")
    kill_fan = delivered_after_a_kill("fan_out", items[:200])
    kill_exec = delivered_after_a_kill("ProcessPoolExecutor", items[:200])
    print(f"one worker SIGKILLed after the first result: fan_out delivered {kill_fan};")
    print(f"  ProcessPoolExecutor delivered {kill_exec}")
    met = ratio >= 1.5 or "BrokenProcessPool" in kill_exec
    print(f"target (keep fan_out): {'MET' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
