"""The import's worker processes (new sources read in a ``ProcessPoolExecutor``) never
outlive their importer, and Ctrl-C shows one interruption, not one per worker.

Real processes: an importer in its own process, SIGKILLed or sent SIGINT as a terminal
sends it (to the whole process group).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.transcripts.helpers import live_children, process_alive

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]

# An importer whose workers read 200 "sources" (a stand-in for ``prepare`` answering each
# worker's pid: they are soon done, and wait for more) while its own step is slow.
IMPORTER = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    import django
    django.setup()
    from transcripts.services import agent_import

    signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever was inherited

    agent_import.prepare = lambda path, job: os.getpid()
    files = [Path(f"/nonexistent/{n}.jsonl") for n in range(200)]
    for pid in agent_import.prepared_in_workers(files, "auto", None, False):
        print(pid, flush=True)
        time.sleep(float(sys.argv[1]))  # the importer's own step: a signal lands here
    """
)


def _importer(tmp_path: Path, step_s: float) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIROCREW_")}
    env.update(
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        KIROCREW_HOME=str(tmp_path / "home"),
        KIROCREW_IMPORT_WORKERS="2",
        PYTHONPATH=str(ROOT),
    )
    return subprocess.Popen(
        [sys.executable, "-c", IMPORTER, str(step_s)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal gives a command
    )


def _gone_within(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(process_alive(pid) for pid in pids)


def test_workers_end_soon_after_their_importer_is_killed(tmp_path: Path) -> None:
    """SIGKILL reaches no shutdown: each worker, waiting for its next source on a queue
    it holds both ends of, must notice its importer is gone instead of waiting forever."""
    proc = _importer(tmp_path, 3600)  # the importer stops taking results
    assert proc.stdout is not None
    first = int(proc.stdout.readline())
    workers = live_children(proc.pid)
    assert first in workers
    assert len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert _gone_within(workers, 10)


def test_ctrl_c_stops_importer_and_workers_with_one_interruption(tmp_path: Path) -> None:
    proc = _importer(tmp_path, 0.2)
    assert proc.stdout is not None
    assert proc.stderr is not None
    workers = {int(proc.stdout.readline()) for _ in range(3)}
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=30)
    err = proc.stderr.read().decode()
    assert err.count("KeyboardInterrupt") == 1, err
    assert _gone_within(workers, 10)
