"""Record builders the extract_turns tests share."""

from __future__ import annotations

from typing import Any

import orjson

from summaries.core.extract import extract_turns, extract_turns_from_lines
from summaries.core.transcript_turn import TranscriptTurn


def u(content: Any, ts: Any = None, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "ts": ts, **extra}


def a(content: Any, ts: Any = None, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "ts": ts, **extra}


def lines_of(records: list[Any]) -> list[bytes]:
    return [orjson.dumps(r) + b"\n" for r in records]


def both(records: list[Any], **kw: Any) -> list[TranscriptTurn]:
    """Run both entry points and insist they agree."""
    turns = extract_turns(records, **kw)
    assert extract_turns_from_lines(lines_of(records), **kw) == turns
    return turns
