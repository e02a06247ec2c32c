"""The per-file agent import killed with a real SIGKILL after its store append and before
its state write (the one window where a batch is in the store but not recorded), and a
database failure in the same place: the next run takes every source record exactly once.

Each run is ``manage.py import_transcripts`` in its own process on a private data root.
The killed run's process replaces ``save_state`` with a SIGKILL to itself, so it dies at
exactly that point, with the rows appended and the mirror's transaction committed or not.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.transcripts.test_agent_import_bulk_kill9 import _env, _expected_rows
from transcripts.core.store import TranscriptStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
SID = "5f0c3a2e-7c1d-4b8e-9a41-2d6f0e9b1c77"

# A run that dies where the state would be written (after the append and the mirror).
KILLED_AT_STATE = """
import os, signal, sys
import django
django.setup()
from transcripts.services import agent_import
agent_import.save_state = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
from django.core.management import call_command
call_command("import_transcripts", "--format", "claude-code", sys.argv[1])
"""


def _turns(start: int, count: int) -> list[str]:
    lines = []
    for turn in range(start, start + count):
        base = {"sessionId": SID, "cwd": "/home/dev/proj", "timestamp": "2026-11-30T10:00:00Z"}
        for n, record in enumerate(
            (
                {"type": "user", "message": {"role": "user", "content": f"step {turn}"}},
                {
                    "type": "assistant",
                    "message": {
                        "id": f"e{turn}",
                        "role": "assistant",
                        "stop_reason": "end_turn",
                        "content": [{"type": "text", "text": f"done {turn}"}],
                    },
                },
            )
        ):
            lines.append(json.dumps({**base, "uuid": f"u{turn}-{n}", **record}) + "\n")
    return lines


def _run(env: dict[str, str], src: Path, *, killed: bool) -> None:
    if killed:
        command = [sys.executable, "-c", KILLED_AT_STATE, str(src)]
    else:
        command = [sys.executable, "manage.py", "import_transcripts", "--format", "claude-code"]
        command.append(str(src))
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if killed:
        assert done.returncode == -signal.SIGKILL, done.stderr
    else:
        assert done.returncode == 0, done.stderr


def _migrated(home: Path) -> dict[str, str]:
    env = _env(home)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True)
    return env


def _check_once(home: Path, source: Path) -> None:
    rows = TranscriptStore(home / "sessions").read_session(f"claude:{SID}").rows
    said = [row["content"] for row in rows]
    assert len(said) == len(set(said)) == _expected_rows(source)  # every record, once
    with sqlite3.connect(home / "kirocrew.sqlite3") as db:
        mirrored = db.execute("SELECT row_count FROM transcripts_session").fetchall()
    assert mirrored == [(len(rows),)]


def _source(tmp_path: Path, turns: int) -> tuple[Path, Path, Path, dict[str, str]]:
    """(source folder, the session file with ``turns`` turns, data root, its env)."""
    src = tmp_path / "projects" / "-home-dev-proj"
    src.mkdir(parents=True)
    source = src / f"{SID}.jsonl"
    source.write_text("".join(_turns(0, turns)))
    home = tmp_path / "home"
    return src, source, home, _migrated(home)


def test_a_run_killed_between_append_and_state_duplicates_nothing(tmp_path: Path) -> None:
    src, source, home, env = _source(tmp_path, 3)

    # the first import of the source dies after its append
    _run(env, src, killed=True)
    assert TranscriptStore(home / "sessions").exists(f"claude:{SID}")
    _run(env, src, killed=False)
    _check_once(home, source)

    # records appended to the source: the incremental run dies the same way
    with source.open("a") as out:
        out.writelines(_turns(3, 2))
    _run(env, src, killed=True)
    _run(env, src, killed=False)
    _check_once(home, source)

    # and a run that finds nothing new leaves it as it is
    _run(env, src, killed=False)
    _check_once(home, source)
    assert not list((home / "sessions" / ".agent-imports").glob("*.pending"))


def test_a_batch_whose_append_never_landed_is_read_again(tmp_path: Path) -> None:
    """The write-ahead record of a batch that never reached the store (killed before the
    append) is dropped, and the batch is imported in full."""
    from transcripts.services import agent_import

    src, source, home, env = _source(tmp_path, 2)
    # as a run killed right after its write-ahead record leaves it: no store file yet
    states = home / "sessions" / ".agent-imports"
    next_state = {"key": f"claude:{SID}", "offset": source.stat().st_size}
    record = {"next": next_state, "store_size": 0, "store_ino": None}
    pending = agent_import.pending_path(source, states)
    pending.parent.mkdir(parents=True)
    pending.write_bytes(json.dumps(record).encode())

    _run(env, src, killed=False)
    _check_once(home, source)
    assert not pending.exists()
