"""The agent-format fixtures (tests/data/agent_formats) copied to a scratch tree."""

from __future__ import annotations

import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "agent_formats"
CLAUDE_SID = "5f0c8a4e-2b1d-4c3e-9a7f-1e2d3c4b5a60"
CODEX_ID = "019a7c3e-1111-7222-8333-944455556666"
CLAUDE_PROJECT = "claude/projects/-home-ann-src-dateparse"
CLAUDE_FILE = f"{CLAUDE_PROJECT}/{CLAUDE_SID}.jsonl"
CLAUDE_AGENT = f"{CLAUDE_PROJECT}/{CLAUDE_SID}/subagents/agent-a1b2c3.jsonl"
CODEX_FILE = f"codex/sessions/2026/11/30/rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"

# Hand counts of the fixtures (see the comments in test_convert.py).
CLAUDE_TALLY = {
    "imported": 21,
    "dropped:bookkeeping": 4,
    "dropped:meta": 1,
    "dropped:thinking": 1,
    "dropped:duplicate": 1,
    "dropped:other_thread": 1,
    "unknown:mystery-record": 1,
}
CODEX_TALLY = {
    "imported": 17,
    "dropped:line0": 1,
    "dropped:context": 1,
    "dropped:duplicate_layer": 4,
    "dropped:bookkeeping": 6,
    "dropped:reasoning": 2,
    "unknown:world_state": 1,
    "unknown:event_msg/some_new_event": 1,
}


def copy_tree(dest: Path, sub: str = "") -> Path:
    shutil.copytree(DATA / sub if sub else DATA, dest)
    return dest
