"""The ``fake_cli`` fixture: fake ``claude`` and ``codex`` executables first on PATH, a
scratch HOME (where they write sessions, as the real ones do, when asked to persist), and
a record folder with what each run received (argv, stdin, environment, folder, pids)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent / "fake_cli" / "fake_agent.py"
AGENTS = Path(__file__).resolve().parents[1] / "data" / "agent_formats"
SESSIONS = {
    "claude": next((AGENTS / "claude" / "projects").glob("*/*.jsonl")),
    "codex": next((AGENTS / "codex" / "sessions").rglob("rollout-*.jsonl")),
}


@dataclass
class FakeCli:
    bin: Path
    home: Path
    record: Path
    monkeypatch: pytest.MonkeyPatch

    def mode(self, mode: str, reply: str | None = None) -> None:
        self.monkeypatch.setenv("FAKE_CLI_MODE", mode)
        if reply is not None:
            self.monkeypatch.setenv("FAKE_CLI_REPLY", reply)

    def persists_like(self, agent: str) -> None:
        """Write a real session file (a fixture of that agent's format) when not told
        otherwise, where the real CLI would."""
        self.monkeypatch.setenv("FAKE_CLI_SESSION", str(SESSIONS[agent]))

    def recorded(self, name: str) -> str:
        return (self.record / name).read_text()

    def recorded_json(self, name: str) -> Any:
        return json.loads(self.recorded(name))


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCli:
    root = tmp_path / "fake_cli"
    bin_dir, home, record = root / "bin", root / "home", root / "record"
    for folder in (bin_dir, home, record):
        folder.mkdir(parents=True)
    for agent in ("claude", "codex"):
        exe = bin_dir / agent
        exe.write_text(
            f"#!{sys.executable}\nimport os, runpy\nos.environ['FAKE_CLI_AGENT'] = {agent!r}\n"
            f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
        )
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ.get('PATH', '')}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    monkeypatch.delenv("FAKE_CLI_SESSION", raising=False)
    monkeypatch.setenv("FAKE_CLI_MODE", "reply")
    return FakeCli(bin_dir, home, record, monkeypatch)
