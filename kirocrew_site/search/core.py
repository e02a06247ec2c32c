"""The search index's pure rules (no Django): query words, snippet fragments, indexed text.

No engine's query language reaches the database (FTS5 reads ``"``, ``*``, ``NEAR``,
``col:`` as syntax: a typo errors, a column filter probes): every word is required, quoted
on FTS5, ``plainto_tsquery`` on PostgreSQL. Matches are marked with two private-use
characters and fragments carry text only, so transcript text never becomes markup. Long
texts are chunked: PostgreSQL refuses a ``tsvector`` over 1 MB, and snippets re-read a
hit's whole text (``ts_headline``: ~105 ms on 16 000-character chunks, ~7 ms on 2 000).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import Any

MAX_QUERY_CHARS = 200
MAX_TERMS = 12
_WORD = re.compile(r"\w+", re.UNICODE)


class QueryRejected(ValueError):
    """The text names nothing to search for, or too much; the message says which."""


@dataclass(frozen=True, slots=True)
class Terms:
    words: tuple[str, ...]

    def fts5(self) -> str:
        """An FTS5 MATCH expression: each word a quoted string (AND between them)."""
        return " ".join(f'"{word}"' for word in self.words)

    def plain(self) -> str:
        """The words for ``plainto_tsquery`` (which ANDs them)."""
        return " ".join(self.words)


def parse_terms(text: str) -> Terms:
    if len(text) > MAX_QUERY_CHARS:
        raise QueryRejected(f"q must be at most {MAX_QUERY_CHARS} characters")
    words = tuple(dict.fromkeys(w.lower() for w in _WORD.findall(text.replace("\x00", " "))))
    if not words:
        raise QueryRejected("q must contain a word to search for")
    if len(words) > MAX_TERMS:
        raise QueryRejected(f"q may hold at most {MAX_TERMS} words")
    return Terms(words)


MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Fragment:
    text: str
    hit: bool  # a matched word: shown highlighted


def fragments(marked: str) -> tuple[Fragment, ...]:
    """``"a \\ue000b\\ue001 c"`` -> (a , plain), (b, hit), ( c, plain)."""
    out: list[Fragment] = []
    rest = marked
    while rest:
        start = rest.find(MARK_OPEN)
        if start < 0:
            out.append(Fragment(rest.replace(MARK_CLOSE, ""), False))
            break
        if start:
            out.append(Fragment(rest[:start].replace(MARK_CLOSE, ""), False))
        end = rest.find(MARK_CLOSE, start + 1)
        end = len(rest) if end < 0 else end
        hit = rest[start + 1 : end].replace(MARK_OPEN, "")
        if hit:
            out.append(Fragment(hit, True))
        rest = rest[end + 1 :]
    kept = (f for f in out if f.text)  # neighbours of one kind merged
    return tuple(
        Fragment("".join(f.text for f in run), hit)
        for hit, run in groupby(kept, key=lambda f: f.hit)
    )


CHUNK_CHARS = 4_000  # a chunk's length; cut at the last whitespace in its final 10 %
_MAX_DEPTH = 64  # the content rule's own bound: nothing stored is deeper


def content_text(content: Any) -> str:
    """A string as is; structured content's string leaves (keys and numbers left out)."""
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
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            _leaves(item, out, depth + 1)


def clean(text: str) -> str:
    """The snippet markers never come from the text itself (they would fake a highlight)."""
    if MARK_OPEN in text or MARK_CLOSE in text:
        text = text.replace(MARK_OPEN, " ").replace(MARK_CLOSE, " ")
    return text


def chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    """Pieces of at most ``size`` characters, cut at whitespace near the end when there is one."""
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
    """The gist, each intent's words pointing at the turn it came from, the constraints."""
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
