"""B6: append throughput through the store (locks + redaction on) vs raw ``os.write``.

Arms, each appending the same realistic non-user rows (mixed sizes, ~10 % carrying a
secret, so redaction has work) one row per call, ``TranscriptStore.append_rows``:

* raw:        one process, ``os.write`` of the same pre-encoded lines to an O_APPEND fd
              (the baseline: no lock, no encoding, no redaction, no ts read);
* 1 proc:     one process, one key;
* 4 procs, same key:       four processes contend for one transcript (flock + ts order);
* 4 procs, different keys: four processes, one transcript each.

Rows/s counts all rows over the wall time from a start barrier to the last worker done.
Runs per fsync policy: "rotate" (the default: appends rely on the page cache) and
"always" (fsync per append; fewer rows, and a raw ``os.write`` + ``fsync`` baseline too).
Rotation is disabled (max_bytes huge) so every arm measures appends only.
After each run the files are folded: every row present, no anomaly (no torn or glued
line, ts strictly increasing).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from transcripts.core.codec import encode_record
from transcripts.core.store import TranscriptStore

NO_ROTATION = 1 << 50
PROCS = 4


def make_rows(n: int, seed: int) -> list[dict[str, Any]]:
    # User rows skip redaction: only the roles the write boundary redacts.
    f = common.RowFactory(seed=seed, profile="mixed", secret_rate=0.1, exclude_roles=("user",))
    return [f.row() for _ in range(n)]


def _worker(
    root: str, key: str, fsync: str, rows: list[dict[str, Any]], barrier: Any, done: Any
) -> None:
    store = TranscriptStore(Path(root), fsync=fsync, max_bytes=NO_ROTATION)
    barrier.wait()
    redacted = 0
    for row in rows:
        redacted += sum(store.append_rows(key, [row]).redactions.values())
    done.put(redacted)


def run_store(
    root: Path, keys: list[str], fsync: str, chunks: list[list[dict[str, Any]]]
) -> tuple[float, int]:
    """Append ``chunks[i]`` to ``keys[i]`` in one process (one chunk) or one process each."""
    meta = {"title": "append benchmark"}
    store = TranscriptStore(root, fsync=fsync, max_bytes=NO_ROTATION)
    for key in set(keys):
        store.create(key, meta, exist_ok=True)
    if len(chunks) == 1:
        t0 = time.perf_counter()
        redacted = 0
        for row in chunks[0]:
            redacted += sum(store.append_rows(keys[0], [row]).redactions.values())
        return time.perf_counter() - t0, redacted
    ctx = mp.get_context("fork")
    barrier, done = ctx.Barrier(len(chunks) + 1), ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(root), key, fsync, chunk, barrier, done))
        for key, chunk in zip(keys, chunks, strict=True)
    ]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    redacted = sum(done.get(timeout=120) for _ in procs)
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0, f"worker exit code {p.exitcode}"
    return elapsed, redacted


def run_raw(path: Path, lines: list[bytes], fsync: bool) -> float:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        t0 = time.perf_counter()
        for line in lines:
            os.write(fd, line)
            if fsync:
                os.fsync(fd)
        return time.perf_counter() - t0
    finally:
        os.close(fd)


def check(root: Path, keys: list[str], expected: int) -> None:
    store = TranscriptStore(root)
    total = 0
    for key in set(keys):
        folded = store.read_file(key)
        assert not folded.report.anomalies, (key, folded.report.counts())
        total += len(folded.rows)
    assert total == expected, (total, expected)


def bench_policy(tmp: Path, policy: str, rows: list[dict[str, Any]], runs: int) -> dict[str, float]:
    n = len(rows)
    per = [rows[i::PROCS] for i in range(PROCS)]
    lines = [encode_record({**r, "ts": "2026-01-15T09:00:00.000001+09:00"}) for r in rows]
    best: dict[str, float] = {}
    redacted = 0
    arms = ["raw os.write", "1 proc", "4 procs same key", "4 procs diff keys"]
    if policy == "always":
        arms.insert(1, "raw os.write+fsync")
    for run in range(runs):
        for arm in arms:
            root = tmp / f"{policy}-{run}-{arm.replace(' ', '_').replace('+', '_')}"
            root.mkdir()
            if arm.startswith("raw"):
                elapsed = run_raw(root / "raw.jsonl", lines, fsync=arm.endswith("fsync"))
            else:
                if arm == "1 proc":
                    keys, chunks = ["bench:one"], [rows]
                elif arm == "4 procs same key":
                    keys, chunks = ["bench:shared"] * PROCS, per
                else:
                    keys, chunks = [f"bench:k{i}" for i in range(PROCS)], per
                elapsed, red = run_store(root, keys, policy, chunks)
                redacted = max(redacted, red)
                check(root, keys, n)
            best[arm] = min(best.get(arm, float("inf")), elapsed)
    raw = best["raw os.write"]
    print(
        f'\nfsync policy "{policy}": {n:,} rows (avg {sum(map(len, lines)) / n:,.0f} B/line), best of {runs}'
    )
    print(f"{'arm':<22}{'best':>12}{'rows/s':>14}{'us/row':>10}{'time vs raw':>13}")
    for arm in arms:
        t = best[arm]
        print(
            f"{arm:<22}{common.fmt_ms(t):>12}{n / t:>14,.0f}{t / n * 1e6:>10.1f}{t / raw:>12.1f}x"
        )
    one = best["1 proc"]
    print(
        f"ratios (rows/s): 1 proc / raw = {raw / one:.4f} ({one / raw:,.0f}x slower); "
        f"4 procs same key / 1 proc = {one / best['4 procs same key']:.2f}; "
        f"4 procs diff keys / 1 proc = {one / best['4 procs diff keys']:.2f}"
    )
    if policy == "always":
        print(f"ratio 1 proc / raw os.write+fsync (time): {one / best['raw os.write+fsync']:.2f}x")
    print(
        f"secrets redacted per run: {redacted}"
        + ("  (redaction.py is still a placeholder)" if not redacted else "")
    )
    return best


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument(
        "--rows", type=int, default=3000, help='rows per arm, fsync "rotate" (default 3000)'
    )
    ap.add_argument(
        "--always-rows", type=int, default=400, help='rows per arm, fsync "always" (default 400)'
    )
    ap.add_argument("--runs", type=int, default=5, help="runs per arm, interleaved (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-always", action="store_true")
    args = ap.parse_args(argv)

    print(f"bench_append: {common.cpu_note()}, {PROCS} worker processes (fork)")
    rows = make_rows(max(args.rows, args.always_rows), args.seed)
    with common.temp_dir("append") as tmp:
        bench_policy(tmp, "rotate", rows[: args.rows], args.runs)
        if not args.skip_always:
            bench_policy(tmp, "always", rows[: args.always_rows], args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
