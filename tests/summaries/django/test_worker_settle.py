"""Before ``import_transcripts`` returns, the passes its turn ends queued finish (or, after
Ctrl-C, only the running one does): left to the interpreter's exit, each pass's frame push
failed with a traceback after the command had printed its summary line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from summaries.core.sidecar import INTENTS, sidecar_path
from summaries.worker import summary_submit, summary_worker_pending, summary_worker_settle
from tests.transcripts.agents.helpers import CLAUDE_SID, copy_tree

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.django_db  # a pass thread closes stale connections first


class Passes:
    """One worker; the first pass waits on ``gate`` so the others stay queued."""

    def __init__(self, settings: Any) -> None:
        settings.KIROCREW_SUMMARY_WORKERS = 1
        self.ran: list[str] = []
        self.started = threading.Event()
        self.gate = threading.Event()

    def run(self, slot_name: str) -> None:
        self.started.set()
        self.gate.wait(timeout=30)
        self.ran.append(slot_name)


@pytest.mark.parametrize("give_up", [False, True])
def test_settling_waits_for_every_pass_or_only_the_running_one(
    settings: Any, summary_worker: None, give_up: bool
) -> None:
    passes = Passes(settings)
    names = ["s1", "s2", "s3"]
    assert all(summary_submit(name, passes.run) for name in names)
    assert passes.started.wait(timeout=10)  # s1 runs, s2 and s3 wait behind it
    threading.Timer(0.2, passes.gate.set).start()
    summary_worker_settle(give_up=give_up)
    assert summary_worker_pending() == 0  # nothing left for the interpreter's exit
    assert passes.ran == (["s1"] if give_up else names)
    # Giving up holds for that settle only: the next pass runs as usual.
    assert summary_submit("s4", passes.run)
    summary_worker_settle(give_up=False)
    assert passes.ran[-1] == "s4"


def _env(home: Path) -> dict[str, str]:
    """The embedded default (SQLite, no broker, in-memory layer) with summaries on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KIROCREW_", "REDIS_URL"))}
    env.pop("DATABASE_URL", None)
    env.update(KIROCREW_HOME=str(home), KIROCREW_SUMMARY_ENABLED="1", PYTHONUNBUFFERED="1")
    return env


def _manage(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "manage.py"), *args]


@pytest.mark.slow
def test_an_import_returns_once_its_summaries_are_written_with_no_traceback(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path / "home")
    subprocess.run(_manage("migrate", "-v0"), env=env, cwd=ROOT, check=True, timeout=120)
    src = copy_tree(tmp_path / "src", "claude")
    done = subprocess.run(
        _manage("import_transcripts", "--format", "claude-code", str(src)),
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "Summarizing: waiting for" in done.stderr
    # Written by the time the command returned (not by a pass still running at exit).
    summary = sidecar_path(tmp_path / "home" / "sessions", f"claude:{CLAUDE_SID}", INTENTS)
    assert summary.exists(), done.stderr[-3000:]


@pytest.mark.slow
def test_ctrl_c_stops_a_follow_cleanly(tmp_path: Path) -> None:
    env = _env(tmp_path / "home")
    subprocess.run(_manage("migrate", "-v0"), env=env, cwd=ROOT, check=True, timeout=120)
    src = copy_tree(tmp_path / "src", "claude")
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            _manage("import_transcripts", "--format", "claude-code", "--follow", str(src)),
            env=env,
            cwd=ROOT,
            stdout=stdout,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + 120
            while "Imported" not in out.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, err.read_text()[-3000:]
                time.sleep(0.1)
            assert out.read_text().startswith("Following 1 folder every 1 s (Ctrl-C stops)")
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert code == 0, err.read_text()[-3000:]
    assert "Traceback" not in err.read_text(), err.read_text()[-3000:]
