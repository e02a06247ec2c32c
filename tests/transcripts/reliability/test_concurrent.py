"""D2 / D2b: several processes (each with several threads) append to one transcript.

D2 runs the real store; D2b runs the identical workload with the lock replaced by a no-op
and each line split over two ``write()`` calls, and must SEE the damage: that control is
what proves D2's assertions would catch a broken lock.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.store import TranscriptStore
from transcripts.core.timestamps import ts_strictly_after

from .procs import child_env, reap, spawn
from .writer_support import HUGE

KEY = "dashboard:concurrent"
PROCESSES = 4
THREADS = 2
PER_THREAD = 150
EXPECTED = PROCESSES * THREADS * PER_THREAD


def _run_writers(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Start every writer, release them together, return each one's JSON result."""
    start_read, start_write = os.pipe()
    procs = []
    try:
        for wid in range(PROCESSES):
            procs.append(
                spawn(
                    "append",
                    root,
                    KEY,
                    wid,
                    THREADS,
                    PER_THREAD,
                    start_read,
                    pass_fds=(start_read,),
                    env=env,
                )
            )
    finally:
        os.close(start_read)
        os.close(start_write)  # EOF on the start pipe: every writer starts now
    results = []
    for proc in procs:
        code = reap(proc)
        out = proc.stdout.read().decode() if proc.stdout else ""
        err = proc.stderr.read().decode() if proc.stderr else ""
        assert code == 0, f"writer exited {code}:\n{err}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _writer_runs(rows: list[dict[str, Any]]) -> int:
    """How many times consecutive rows in file order come from different processes."""
    owners = [row.get("meta", {}).get("w") for row in rows]
    return sum(1 for a, b in itertools.pairwise(owners) if a != b)


@pytest.mark.slow
def test_concurrent_appends_from_processes_and_threads(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path, max_bytes=HUGE)
    store.create(KEY, {"title": "D2"})
    results = _run_writers(tmp_path, child_env())
    assert [r["failures"] for r in results] == [[]] * PROCESSES
    assert sum(r["appended"] for r in results) == EXPECTED

    view = store.read_session(KEY)
    assert view.report.anomalies == [], view.report.counts()
    assert len(view.rows) == EXPECTED
    assert store.path(KEY).read_bytes().endswith(b"\n")
    stamps = [row["ts"] for row in view.rows]
    assert all(ts_strictly_after(b, a) for a, b in itertools.pairwise(stamps))
    per_writer: dict[tuple[int, int], list[int]] = {}
    for row in view.rows:
        meta = row["meta"]
        per_writer.setdefault((meta["w"], meta["t"]), []).append(meta["n"])
    assert per_writer == {
        (w, t): list(range(PER_THREAD)) for w in range(PROCESSES) for t in range(THREADS)
    }
    # Teeth: the writers really ran at the same time (their rows interleave in the file).
    switches = _writer_runs(view.rows)
    print(f"D2: {len(view.rows)} rows, writer switches in file order: {switches}")
    assert switches >= PROCESSES * 4, "the writers ran one after another; nothing was raced"


@pytest.mark.slow
def test_lock_removed_control_detects_corruption(tmp_path: Path) -> None:
    """D2b: without the lock (and with split writes) the same checks must fail."""
    store = TranscriptStore(tmp_path, max_bytes=HUGE)
    store.create(KEY, {"title": "D2b"})
    results = _run_writers(tmp_path, child_env(KIROCREW_TEST_NOLOCK="1"))
    view = store.read_session(KEY)
    stamps = [str(row.get("ts")) for row in view.rows]
    disorder = sum(1 for a, b in itertools.pairwise(stamps) if not ts_strictly_after(b, a))
    found = {
        "anomalies": view.report.counts(),
        "ts_order_violations": disorder,
        "rows_missing": EXPECTED - len(view.rows),
        "writer_failures": sum(len(r["failures"]) for r in results),
    }
    print(f"D2b (no lock, split writes) detected: {found}")
    assert view.report.anomalies or disorder or len(view.rows) != EXPECTED, found
    # Not just any difference: the D2 assertions would have flagged this run.
    assert view.report.counts().get("bad_json", 0) + disorder > 0, found
