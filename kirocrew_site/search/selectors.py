"""Search reads on either engine (the index each queries is made by the migration): SQLite
FTS5 ranked by bm25, PostgreSQL a ``tsvector`` ranked by ``ts_rank``. Ownership is a clause
of the engine's query, never a filter after it: a foreign session's text never reaches a
hit, a count or a snippet. Summary text is searched only while summaries are on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.db import connection

from summaries.runtime import summary_config
from transcripts.models import App, Session

from .core import (
    ELLIPSIS,
    MARK_CLOSE,
    MARK_OPEN,
    Fragment,
    QueryRejected,
    Terms,
    fragments,
    parse_terms,
)
from .models import DocKind, SearchDoc

__all__ = ["QueryRejected", "SearchHit", "search_query"]

LIMIT_DEFAULT = 20
LIMIT_MAX = 100

SNIPPET_WORDS = 16
# bm25 ranks the newest RANK_WINDOW matches (a rare term has fewer: all of them). Ranking
# every match of a common word cost O(index): ~0.9 s at 500 MB (bench/bench_search.py).
RANK_WINDOW = 2000

Scope = App | Literal[""] | None  # an app's sessions, "" every session, None the unowned


@dataclass(frozen=True, slots=True)
class RawHit:
    session_id: int
    kind: str
    turn: int
    cursor: str
    role: str
    marked: str  # the snippet, matches between MARK_OPEN and MARK_CLOSE


def _sqlite(scope: Scope, terms: Terms, limit: int, rows_only: bool) -> list[RawHit]:
    """The best ``limit`` doc ids by bm25, then snippets for those alone: in one statement
    SQLite ran ``snippet()`` for every match before sorting (a common word: every row)."""
    where: list[str] = ["search_fts MATCH %s"]
    params: list[Any] = [terms.fts5()]
    if scope is None:
        where.append("s.app_id IS NULL")
    elif scope != "":
        where.append("s.app_id = %s")
        params.append(scope.pk)
    if rows_only:
        where.append("d.kind = %s")
        params.append(DocKind.ROW.value)
    # Fixed clauses only; every value is a parameter.
    best = (
        "SELECT id FROM (SELECT search_fts.rowid AS id, search_fts.rank AS r "  # noqa: S608
        "FROM search_fts "
        "JOIN search_searchdoc d ON d.id = search_fts.rowid "
        "JOIN transcripts_session s ON s.id = d.session_id "
        f"WHERE {' AND '.join(where)} ORDER BY search_fts.rowid DESC LIMIT %s) "
        "ORDER BY r LIMIT %s"
    )
    with connection.cursor() as cur:
        cur.execute(best, [*params, RANK_WINDOW, limit])
        ids = [row[0] for row in cur.fetchall()]
        if not ids:
            return []
        marks = ", ".join(["%s"] * len(ids))
        cur.execute(
            "SELECT d.id, d.session_id, d.kind, d.turn, d.cursor, d.role, "  # noqa: S608
            f"snippet(search_fts, 0, %s, %s, %s, {SNIPPET_WORDS}) "
            "FROM search_fts JOIN search_searchdoc d ON d.id = search_fts.rowid "
            f"WHERE search_fts MATCH %s AND search_fts.rowid IN ({marks})",
            [MARK_OPEN, MARK_CLOSE, ELLIPSIS, terms.fts5(), *ids],
        )
        found = {row[0]: RawHit(*row[1:]) for row in cur.fetchall()}
    return [found[i] for i in ids if i in found]


def _postgres(scope: Scope, terms: Terms, limit: int, rows_only: bool) -> list[RawHit]:
    from django.contrib.postgres.search import (
        SearchHeadline,
        SearchQuery,
        SearchRank,
        SearchVectorField,
    )
    from django.db.models.expressions import RawSQL

    query = SearchQuery(terms.plain(), search_type="plain", config="english")
    # Unqualified: only search_searchdoc has the column, and inside the window's subquery
    # (where Django aliases the table) it must name the subquery's own row.
    vector = RawSQL('"vector"', [], output_field=SearchVectorField())
    docs = SearchDoc.objects.annotate(vector=vector).filter(vector=query)
    if scope is None:
        docs = docs.filter(session__app__isnull=True)
    elif scope != "":
        docs = docs.filter(session__app=scope)
    if rows_only:
        docs = docs.filter(kind=DocKind.ROW)
    # As on SQLite: ts_rank over the newest RANK_WINDOW matches. For a common word the
    # planner walks the primary key backwards and stops; for a rare one the GIN index
    # finds every match (fewer than the window).
    window = docs.order_by("-id").values("id")[:RANK_WINDOW]
    best = list(
        SearchDoc.objects.annotate(vector=vector)
        .filter(id__in=window)
        .annotate(rank=SearchRank(vector, query))
        .order_by("-rank", "-id")
        .values_list("id", flat=True)[:limit]
    )
    if not best:
        return []
    # Headlines for the chosen docs alone (ts_headline re-parses the whole text).
    marked = SearchDoc.objects.filter(id__in=best).annotate(
        marked=SearchHeadline(
            "text",
            query,
            config="english",
            start_sel=MARK_OPEN,
            stop_sel=MARK_CLOSE,
            max_words=SNIPPET_WORDS * 2,
            min_words=SNIPPET_WORDS,
            max_fragments=2,
            fragment_delimiter=f" {ELLIPSIS} ",
        )
    )
    found = {
        row[0]: RawHit(*row[1:])
        for row in marked.values_list(
            "id", "session_id", "kind", "turn", "cursor", "role", "marked"
        )
    }
    return [found[i] for i in best if i in found]


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
    """The best matches of ``text`` among ``scope``'s sessions (``QueryRejected``: no word)."""
    terms = parse_terms(text)
    limit = max(1, min(limit, LIMIT_MAX))
    rows_only = not summary_config().enabled
    match = _postgres if connection.vendor == "postgresql" else _sqlite
    raws = match(scope, terms, limit, rows_only)
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
