"""What text the index holds for a row and for a stored summary.

The index holds what is stored, nothing else: rows are redacted at the write boundary, so
their text is indexed as read. Long texts are cut into chunks: PostgreSQL refuses a
``tsvector`` over 1 MB, and both engines re-read a hit's whole text to cut its snippet
(``ts_headline`` on twenty 16 000-character chunks took ~105 ms, on 2 000 ~7 ms).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .snippet import MARK_CLOSE, MARK_OPEN

CHUNK_CHARS = 4_000  # a chunk's length; cut at the last whitespace in its final 10 %
_MAX_DEPTH = 64  # the content rule's own bound: nothing stored is deeper


def content_text(content: Any) -> str:
    """A row's searchable text: a string as is; structured content's string leaves
    (tool inputs, outputs, block texts) joined by newlines, keys and numbers left out."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    _leaves(content, parts, 0)
    return "\n".join(parts)


def _leaves(value: Any, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        if value.strip():
            out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _leaves(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out, depth + 1)


def clean(text: str) -> str:
    """The snippet markers never come from the text itself (they would fake a highlight)."""
    if MARK_OPEN in text or MARK_CLOSE in text:
        text = text.replace(MARK_OPEN, " ").replace(MARK_CLOSE, " ")
    return text


def chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    """``text`` in pieces of at most ``size`` characters, cut at whitespace when one is
    near the end so a word is rarely split; blank text yields nothing."""
    text = clean(text)
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            space = text.rfind(" ", start + size * 9 // 10, end)
            newline = text.rfind("\n", start + size * 9 // 10, end)
            cut = max(space, newline)
            if cut > start:
                end = cut + 1
        piece = text[start:end]
        if piece.strip():
            yield piece
        start = end


@dataclass(frozen=True, slots=True)
class SummaryText:
    """One searchable part of a stored summary and the turn it points at (0: none)."""

    text: str
    turn: int


def summary_texts(payload: Any, gist: str = "") -> list[SummaryText]:
    """The stored summary's words: the one-line gist, each intent (title, why it started,
    progress, next steps) pointing at the turn it came from, and the constraints."""
    out: list[SummaryText] = []
    if gist.strip():
        out.append(SummaryText(clean(gist), 0))
    if not isinstance(payload, dict):
        return out
    for intent in payload.get("intents") or []:
        if not isinstance(intent, dict):
            continue
        parts: list[str] = [str(intent.get("title") or ""), str(intent.get("initial_intent") or "")]
        parts += [str(p) for p in intent.get("progress") or [] if isinstance(p, str)]
        for step in intent.get("next_steps") or []:
            if isinstance(step, dict):
                parts += [str(step.get("what") or ""), str(step.get("why") or "")]
        text = "\n".join(p for p in parts if p.strip())
        if text:
            out.append(SummaryText(clean(text), _intent_turn(intent)))
    constraints = [c for c in payload.get("constraints") or [] if isinstance(c, str)]
    if constraints:
        out.append(SummaryText(clean("\n".join(constraints)), 0))
    return out


def _intent_turn(intent: dict[str, Any]) -> int:
    origin = intent.get("origin_turn")
    if type(origin) is int and origin > 0:
        return origin
    for span in intent.get("ranges") or []:  # [first_user_turn, last_user_turn]
        first = span[0] if isinstance(span, list) and span else None
        if type(first) is int and first > 0:
            return first
    return 0
