"""Which format a session file is in, from its first non-empty lines (§3 of agent-formats)."""

from __future__ import annotations

from typing import Any

import orjson

SCAN_LINES = 20
FORMATS = ("kirocrew", "claude-code", "codex")
CLAUDE_BOOKKEEPING = frozenset({"file-history-snapshot", "queue-operation", "summary"})


def detect_lines(lines: list[bytes]) -> str | None:
    """``claude-code`` | ``codex`` | ``codex-legacy`` | ``kirocrew`` | None (unknown)."""
    records: list[dict[str, Any]] = []
    for line in lines[:SCAN_LINES]:
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            records.append(value)
    if not records:
        return None
    first = records[0]
    if first.get("_type") == "metadata" or ("role" in first and "ts" in first):
        return "kirocrew"
    if "payload" in first and first.get("type") == "session_meta":
        return "codex"
    if "session" in first and "items" in first:
        return "codex-legacy"
    if "id" in first and "timestamp" in first and "type" not in first:
        return "codex-legacy"
    if any("payload" not in r and ("sessionId" in r or "uuid" in r) for r in records):
        return "claude-code"
    if all("payload" not in r and r.get("type") in CLAUDE_BOOKKEEPING for r in records):
        return "claude-code"  # a session that so far holds only snapshots and queue lines
    if "payload" in first and "type" in first:
        return "codex"
    return None
