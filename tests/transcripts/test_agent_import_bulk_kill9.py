"""A bulk first import killed with a real SIGKILL, again and again, then run to the end:
every source session is in the store exactly once, with all its rows, and mirrored.

Each run is ``manage.py import_transcripts`` in its own process on a private data root
(SQLite file, no broker). Kills land when the store holds more session files than the
import has recorded states (a batch between its links and its commit), or failing
that at a given count of sessions.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.agents.source import convert_range, new_state
from transcripts.core.store import TranscriptStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = 160
FOREIGN = ("KIROCREW_", "CELERY_", "DATABASE_URL", "REDIS_URL", "DJANGO_")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    env.update(
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        KIROCREW_HOME=str(home),
        KIROCREW_TRANSCRIPT_FSYNC="never",
        KIROCREW_SUMMARY_ENABLED="0",
        KIROCREW_LOG_LEVEL="ERROR",
        PYTHONPATH=str(ROOT),
    )
    return env


def _session(path: Path, rng: random.Random) -> None:
    sid = path.stem
    words = ["the", "parser", "fails", "on", "ISO", "weeks", "so", "we", "run", "again"]
    lines: list[str] = []
    for turn in range(12):
        base = {"sessionId": sid, "cwd": "/home/dev/proj", "timestamp": "2026-11-30T10:00:00Z"}
        call = f"toolu_{turn}"
        out = " ".join(rng.choice(words) for _ in range(300))
        for record in (
            {"type": "user", "message": {"role": "user", "content": f"step {turn}"}},
            {
                "type": "assistant",
                "message": {
                    "id": f"m{turn}",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": "Bash",
                            "input": {"command": "make"},
                        }
                    ],
                },
            },
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call, "content": out}],
                },
            },
            {
                "type": "assistant",
                "message": {
                    "id": f"e{turn}",
                    "role": "assistant",
                    "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": f"done {turn}"}],
                },
            },
        ):
            lines.append(json.dumps({**base, "uuid": f"{sid}-{len(lines)}", **record}))
    path.write_text("\n".join(lines) + "\n")


def _expected_rows(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        state = new_state("claude-code", path, st)
        return len(convert_range(fd, 0, st.st_size, "claude-code", state.conv).rows)
    finally:
        os.close(fd)


def _count(folder: Path, suffix: str) -> int:
    try:
        return sum(1 for name in os.listdir(folder) if name.endswith(suffix))
    except FileNotFoundError:
        return 0


def _import(env: dict[str, str], src: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "manage.py", "import_transcripts", "--format", "claude-code"]
    return subprocess.Popen(
        [*command, str(src)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _kill_mid_run(env: dict[str, str], src: Path, home: Path, at_least: int) -> dict[str, Any]:
    sessions, states = home / "sessions", home / "sessions" / ".agent-imports"
    proc = _import(env, src)
    deadline = time.monotonic() + 120
    torn = False
    while proc.poll() is None and time.monotonic() < deadline:
        files, done = _count(sessions, ".jsonl"), _count(states, ".json")
        torn = files > done and files >= at_least
        if torn or files >= at_least + 40:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.0005)
    code = proc.wait(timeout=60)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert code in (-signal.SIGKILL, 0), err
    return {"killed": code == -signal.SIGKILL, "torn": torn and code == -signal.SIGKILL}


def test_killed_bulk_imports_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    rng = random.Random(7)
    src = tmp_path / "projects" / "-home-dev-proj"
    src.mkdir(parents=True)
    for n in range(SESSIONS):
        _session(src / f"{n:08d}-0000-4000-8000-{rng.getrandbits(48):012x}.jsonl", rng)
    home = tmp_path / "home"
    env = _env(home)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )

    kills = [_kill_mid_run(env, src, home, at_least) for at_least in (1, 50, 100)]
    assert any(k["killed"] for k in kills)  # at least one run died part-way
    final = subprocess.run(
        [sys.executable, "manage.py", "import_transcripts", "--format", "claude-code", str(src)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert final.returncode == 0, final.stderr

    store = TranscriptStore(home / "sessions")
    with sqlite3.connect(home / "kirocrew.sqlite3") as db:
        mirrored = dict(db.execute("SELECT key, row_count FROM transcripts_session"))
        slots = db.execute("SELECT COUNT(*) FROM transcripts_slot").fetchone()[0]
    sources = sorted(src.glob("*.jsonl"))
    assert len(mirrored) == len(sources) == slots == len(store.keys_on_disk())
    for path in sources:
        key = f"claude:{path.stem}"
        rows = store.read_session(key).rows
        assert len(rows) == _expected_rows(path) == mirrored[key], key  # all, and once
        assert len({row["ts"] for row in rows}) == len(rows)
    states = home / "sessions" / ".agent-imports"
    assert _count(states, ".json") == len(sources)
    assert not [n for n in os.listdir(states) if n.endswith(".pending")]  # all settled
