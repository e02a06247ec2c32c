"""Record builders the extract_turns tests share."""

from __future__ import annotations

from typing import Any

import orjson

from summaries.core.extract import extract_turns
from summaries.core.transcript_turn import TranscriptTurn
from transcripts.core.fold import fold_bytes


def u(content: Any, ts: Any = None, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "ts": ts, **extra}


def a(content: Any, ts: Any = None, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "ts": ts, **extra}


def lines_of(records: list[Any]) -> list[bytes]:
    return [orjson.dumps(r) + b"\n" for r in records]


def turns_of_bytes(data: bytes, **kw: Any) -> list[TranscriptTurn]:
    """The turns of a transcript file's bytes as a pass reads them: folded, then extracted."""
    return extract_turns(fold_bytes(data).rows, **kw)
