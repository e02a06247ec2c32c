"""D1: SIGKILL a real writer process over and over; no acknowledged row is ever lost.

One transcript file is reused across every iteration, so each new child's first append
also exercises recovery from whatever the previous kill left (a torn tail is fenced off
by a ``\\n`` and kept as its own reported line, never glued to the next record).

Half the kills come at a uniformly random 5-250 ms; the other half are aimed: the child
(writing mostly 1-4 MB rows) announces each big ``write()`` on the ack pipe right before
the syscall and the parent kills it at once (after a random 0-300 µs), because a random
kill lands inside a write rarely (E1: 2.5-10 %) and the test must prove it saw torn tails.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from transcripts.core.reader import iter_lines, parse_json_line
from transcripts.core.store import TranscriptStore

from .procs import LineReader, reap, spawn
from .writer_support import HUGE

KEY = "dashboard:kill9"
ITERATIONS = 150
PACE_S = 0.003  # between appends: bounds the bytes a 250 ms run can write
FRAGMENT_KINDS = {"torn_tail", "bad_json", "bad_utf8"}
TAIL_READ = 9 * 1024 * 1024  # more than the largest row (4 MB; the line limit is 8 MiB)


def _busy_wait(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _one_run(
    root: Path, seed: int, rng: random.Random, aimed: bool
) -> tuple[list[str], int | None]:
    """Start a writer, SIGKILL it; return its ack lines and, for a kill aimed at an
    announced write, the µs from the announcement to the kill."""
    read_fd, write_fd = os.pipe()
    args = ["--aim"] if aimed else []
    proc = spawn(
        "kill9", root, KEY, write_fd, seed, "--pace", PACE_S, *args,
        pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write_fd)
    reader = LineReader(read_fd)
    try:
        lines = reader.wait_for("R", timeout=30)
        deadline = time.monotonic() + rng.uniform(0.005, 0.25)
        announced: int | None = None
        while time.monotonic() < deadline and not reader.eof:
            new = reader.poll(deadline - time.monotonic())
            lines += new
            big = [line for line in new if line.startswith("W ")]
            if aimed and big:
                _busy_wait(rng.uniform(0, 0.0003))
                announced = int(big[-1].split(" ")[2])
                break
        proc.kill()
        latency = None if announced is None else (time.monotonic_ns() - announced) // 1000
        code = reap(proc)
        lines += reader.drain()
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert code == -signal.SIGKILL, f"writer died on its own ({code}) before the kill:\n{stderr}"
    return lines, latency


def _tail_state(path: Path) -> tuple[int, bytes] | None:
    """(offset, bytes) of an unterminated last line, or None when the file ends in ``\\n``."""
    size = path.stat().st_size
    with path.open("rb") as fp:
        fp.seek(max(0, size - TAIL_READ))
        tail = fp.read()
    if tail.endswith(b"\n"):
        return None
    cut = tail.rfind(b"\n")
    assert cut >= 0, "an unterminated tail longer than any row the writer produces"
    return size - len(tail) + cut + 1, tail[cut + 1 :]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a loaded machine needs more kills to reach ITERATIONS acks
def test_kill9_loop_loses_no_acked_row(tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(1 << 30)
    print(f"kill9 seed={seed}")
    rng = random.Random(seed)
    root = tmp_path / "sessions"
    store = TranscriptStore(root, max_bytes=HUGE)
    store.create(KEY, {"title": "kill -9"})
    path = store.path(KEY)

    acked: list[str] = []  # row ts
    acked_revisions: list[str] = []  # revision ts
    revised: dict[str, int] = {}  # target ts -> largest acked revision value
    fragments: dict[int, tuple[int, str]] = {}  # offset -> (length, sha256) of torn tails
    complete_unterminated = 0  # a kill right before the final "\n": a whole, unacked row
    latencies: list[int] = []  # µs from a big write's announcement to the aimed kill
    torn_by = {"aimed": 0, "random": 0}
    vanished: list[str] = []  # acked rows a later revision could no longer find
    try:
        # A loaded machine acks fewer rows per run, so the loop goes on past ITERATIONS kills
        # (up to eight times as many) until ITERATIONS rows were acked.
        kills = 0
        while kills < ITERATIONS or (len(acked) < ITERATIONS and kills < 8 * ITERATIONS):
            lines, latency = _one_run(root, kills + 1, rng, aimed=kills % 2 == 1)
            kills += 1
            if latency is not None:
                latencies.append(latency)
            for line in lines:
                kind, *fields = line.split(" ")
                if kind == "A":
                    acked.append(fields[0])
                elif kind == "V":
                    ts, target, value = fields
                    acked_revisions.append(ts)
                    revised[target] = max(revised.get(target, 0), int(value))
                elif kind == "L":
                    vanished.append(fields[0])
            state = _tail_state(path)
            if state is None:
                continue
            offset, fragment = state
            value, bad = parse_json_line(fragment)
            if not bad and isinstance(value, dict):
                complete_unterminated += 1
                continue
            seen = (len(fragment), hashlib.sha256(fragment).hexdigest())
            if offset not in fragments:
                torn_by["random" if latency is None else "aimed"] += 1
            assert fragments.setdefault(offset, seen) == seen, "a kept fragment changed"

        assert not vanished, f"acked rows vanished from the file under the writer: {vanished}"
        # After the loop an append works and the file ends with a newline.
        last = store.append_row(KEY, "user", "after the last kill").ts[0]
        with path.open("rb") as fp:
            fp.seek(-1, os.SEEK_END)
            assert fp.read() == b"\n"

        view = store.read_session(KEY)
        stamps = [row["ts"] for row in view.rows]
        present = set(stamps)
        missing = [ts for ts in acked if ts not in present]
        assert not missing, f"{len(missing)} acknowledged rows lost, e.g. {missing[:3]}"
        assert last == stamps[-1]
        assert len(present) == len(stamps), "a row appears twice"
        by_ts = {row["ts"]: row for row in view.rows}
        for target, rev in revised.items():
            assert by_ts[target].get("rev", -1) >= rev, f"acked revision of {target} lost"
        del by_ts

        # Anomalies: only the torn fragments the kills left; nothing else (no glued record,
        # no ts disorder, no blank line).
        kinds = {a.kind for a in view.report.anomalies}
        assert kinds <= FRAGMENT_KINDS, view.report.counts()
        assert sorted(a.offset for a in view.report.anomalies) == sorted(fragments)
        counts = view.report.counts()
        del view, stamps, present

        # Each fragment is still its own whole line, byte for byte, fenced by newlines; and
        # every acknowledged revision record is in the file.
        kept: dict[int, tuple[int, str]] = {}
        revision_stamps: set[str] = set()
        with path.open("rb") as fp:
            for raw in iter_lines(fp):
                data = raw.data or b""
                if raw.offset in fragments:
                    assert raw.terminated
                    kept[raw.offset] = (len(data), hashlib.sha256(data).hexdigest())
                elif data.startswith(b'{"_type":"revision"'):
                    revision_stamps.add(str(parse_json_line(data)[0]["ts"]))
        assert kept == fragments
        assert set(acked_revisions) <= revision_stamps, "an acknowledged revision was lost"

        # Teeth: the loop really wrote, really got killed mid-write, and recovered.
        print(
            f"kill9: {kills} kills ({len(latencies)} aimed, median "
            f"{sorted(latencies or [0])[len(latencies) // 2]} µs after the announcement), "
            f"torn tails {torn_by}, {len(acked)} row acks, "
            f"{len(acked_revisions)} revision acks, {len(fragments)} torn tails kept "
            f"{counts}, {complete_unterminated} complete-but-unterminated, "
            f"file {path.stat().st_size / 1e6:.0f} MB"
        )
        assert len(acked) >= ITERATIONS
        assert revised, "no revision was acknowledged: the revision path was not exercised"
        assert fragments, "no torn tail observed: the kill loop proved nothing"
    finally:
        shutil.rmtree(root, ignore_errors=True)  # hundreds of MB: do not leave them in /tmp
