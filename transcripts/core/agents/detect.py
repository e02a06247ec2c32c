"""Which format a session file is in, from its first non-empty lines (§3 of agent-formats)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

SCAN_LINES = 20
FORMATS = ("kirocrew", "claude-code", "codex")
CLAUDE_BOOKKEEPING = frozenset({"file-history-snapshot", "queue-operation", "summary"})


def detect_lines(lines: list[bytes]) -> str | None:
    """``claude-code`` | ``codex`` | ``codex-legacy`` | ``kirocrew`` | None (unknown).

    Records are parsed only as far as the answer needs (a Claude session is known from
    its first record, almost always): the first ``SCAN_LINES`` lines bound the look.
    """
    records = _records(lines[:SCAN_LINES])
    first = next(records, None)
    if first is None:
        return None
    if first.get("_type") == "metadata" or ("role" in first and "ts" in first):
        return "kirocrew"
    if "payload" in first and first.get("type") == "session_meta":
        return "codex"
    if "session" in first and "items" in first:
        return "codex-legacy"
    if "id" in first and "timestamp" in first and "type" not in first:
        return "codex-legacy"
    if _claude(first):
        return "claude-code"
    seen = [first]
    for record in records:
        if _claude(record):
            return "claude-code"
        seen.append(record)
    if all("payload" not in r and r.get("type") in CLAUDE_BOOKKEEPING for r in seen):
        return "claude-code"  # a session that so far holds only snapshots and queue lines
    if "payload" in first and "type" in first:
        return "codex"
    return None


def _claude(record: dict[str, Any]) -> bool:
    return "payload" not in record and ("sessionId" in record or "uuid" in record)


def _records(lines: list[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value
