"""Search reads: ``search_query(scope, text, limit)`` -> typed hits, whichever engine.

Ownership is a clause of the engine's query (``vendor.match``), never a filter after it:
a foreign session's text never reaches a hit, a count or a snippet. Summary text is
searched only while summaries are on (the flag gates reads, as in the list)."""

from __future__ import annotations

from dataclasses import dataclass

from summaries.runtime import summary_config
from transcripts.models import Session

from . import vendor
from .core.query import QueryRejected, parse_terms
from .core.snippet import Fragment, fragments
from .models import DocKind
from .vendor import Scope

__all__ = ["QueryRejected", "SearchHit", "search_query"]

LIMIT_DEFAULT = 20
LIMIT_MAX = 100


@dataclass(frozen=True, slots=True)
class SearchHit:
    session_key: str
    slot: str  # "" for a session without a slot (no page to link)
    title: str
    kind: DocKind
    turn: int  # the user turn the text belongs to; 0: before the first, or a summary's whole
    cursor: str  # the row's ts ("" for summary text)
    role: str
    snippet: tuple[Fragment, ...]


def search_query(scope: Scope, text: str, limit: int = LIMIT_DEFAULT) -> list[SearchHit]:
    """The best matches of ``text`` among ``scope``'s sessions: an app's, ``""`` all (a
    dashboard user), None the unowned. Raises ``QueryRejected`` for text with no word."""
    terms = parse_terms(text)
    limit = max(1, min(limit, LIMIT_MAX))
    raws = vendor.match(scope, terms, limit, rows_only=not summary_config().enabled)
    sessions = Session.objects.select_related("slot").in_bulk({raw.session_id for raw in raws})
    hits: list[SearchHit] = []
    for raw in raws:
        session = sessions.get(raw.session_id)
        if session is None:  # deleted since the match
            continue
        slot = getattr(session, "slot", None)
        hits.append(
            SearchHit(
                session_key=session.key,
                slot=slot.name if slot is not None else "",
                title=session.title,
                kind=DocKind(raw.kind),
                turn=raw.turn,
                cursor=raw.cursor,
                role=raw.role,
                snippet=fragments(raw.marked),
            )
        )
    return hits
