"""D15: one process rotates (forced, rows really dropped) while another keeps appending.

Rotation replaces the data file's inode. A writer that appended through a descriptor it
opened before the replacement would put its row into the unlinked old inode (E7): gone
from both the new file and the archive. Every acknowledged row must therefore be found
exactly once in archives + current file, and each rotation's archive must hold exactly
the rows that rotation dropped.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

import pytest

from transcripts.core.fold import fold_bytes
from transcripts.core.store import TranscriptStore
from transcripts.core.timestamps import ts_strictly_after

from .procs import CHILD_TIMEOUT_S, LineReader, reap, spawn
from .writer_support import HUGE

KEY = "dashboard:rotating"
ROTATIONS = 20


@pytest.mark.slow
def test_rotation_racing_a_writer_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path, max_bytes=HUGE)
    store.create(KEY, {"title": "D15"})

    ack_read, ack_write = os.pipe()
    stop_read, stop_write = os.pipe()
    writer = spawn("pacer", tmp_path, KEY, ack_write, stop_read, 7, pass_fds=(ack_write, stop_read))
    os.close(ack_write)
    os.close(stop_read)
    acks = LineReader(ack_read)
    rotator = None
    try:
        lines = acks.wait_for("R", timeout=30)
        rotator = spawn("rotator", tmp_path, KEY, ROTATIONS, 11, "--keep", 5)
        deadline = time.monotonic() + CHILD_TIMEOUT_S
        while rotator.poll() is None and time.monotonic() < deadline:
            lines += acks.poll(0.05)
        assert reap(rotator) == 0, rotator.stderr.read().decode() if rotator.stderr else ""
        lines += acks.poll(0.05)  # a few more appends after the last rotation
    finally:
        os.close(stop_write)  # EOF on the stop pipe: the writer returns
        code = reap(writer)
        lines += acks.drain()
        os.close(ack_read)
    assert code == 0, writer.stderr.read().decode() if writer.stderr else ""
    acked = [line.split(" ", 1)[1] for line in lines if line.startswith("A ")]
    assert rotator.stdout is not None
    reports = [json.loads(line) for line in rotator.stdout.read().decode().splitlines()]
    assert len(reports) == ROTATIONS

    # C + L: every acknowledged row is in archives + file, exactly once, in ts order.
    view = store.read_session(KEY)
    stamps = [row["ts"] for row in view.rows]
    assert view.report.anomalies == [], view.report.counts()
    missing = sorted(set(acked) - set(stamps))
    assert not missing, f"{len(missing)} acked rows lost (written to a replaced inode?)"
    assert len(stamps) == len(set(stamps)), "a row is both archived and kept"
    assert all(ts_strictly_after(b, a) for a, b in itertools.pairwise(stamps))
    assert len(stamps) == len(acked)  # nothing but acked rows (the writer exited cleanly)

    # Each rotation: kept rows are a suffix of the rows before it; its archive holds exactly
    # the rows it dropped, in order.
    archived_total = 0
    for report in reports:
        before, after, dropped = report["before"], report["after"], report["dropped"]
        assert before[len(before) - len(after) :] == after
        assert dropped == len(before) - len(after)
        if dropped == 0:
            assert report["new_archives"] == []
            continue
        assert len(report["new_archives"]) == 1
        archive = store.archive_dir / report["new_archives"][0]
        folded = fold_bytes(archive.read_bytes())
        assert (folded.header or {}).get("reason") == "rotate"
        assert [row["ts"] for row in folded.rows] == before[:dropped]
        archived_total += dropped
    assert len(store.archive_paths(KEY)) == sum(1 for r in reports if r["dropped"])
    assert len(store.read_file(KEY).rows) == len(stamps) - archived_total

    # Teeth: rows really dropped while the writer was appending between rotations.
    grew = sum(1 for a, b in itertools.pairwise(reports) if b["before"] != a["after"])
    print(
        f"D15: {len(acked)} acked appends, {ROTATIONS} rotations, "
        f"{sum(1 for r in reports if r['dropped'])} of them dropped rows ({archived_total} archived), "
        f"writer appended between {grew} of {ROTATIONS - 1} rotation pairs"
    )
    assert sum(1 for r in reports if r["dropped"]) >= ROTATIONS // 2
    assert grew >= ROTATIONS // 2
