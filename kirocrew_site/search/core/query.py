"""A person's words -> the terms both engines search for.

Neither engine's own query language reaches the database: FTS5 would read ``"``, ``*``,
``NEAR`` or ``col:`` as syntax (a typo is an error, a column filter a probe), so the text
is cut into words and every word is required (AND), quoted as a literal on FTS5 and
handed to PostgreSQL's ``plainto_tsquery``; both stem English the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
