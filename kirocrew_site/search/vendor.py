"""The one module that knows the two engines: SQLite FTS5 (embedded profile) and
PostgreSQL full-text search (services profile). Everything above it sees ``RawHit``s.

* SQLite: ``search_fts``, an external-content FTS5 table over ``search_searchdoc.text``
  (tokenizer ``porter unicode61``), kept in step by triggers; ranked by bm25, snippets by
  ``snippet()``.
* PostgreSQL: ``search_searchdoc.vector``, a stored generated ``tsvector``
  (``to_tsvector('english', text)``) with a GIN index, queried through
  ``django.contrib.postgres.search``; ranked by ``ts_rank``, snippets by ``ts_headline``.

Both mark matches with ``core.snippet``'s private-use markers, never with HTML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.db import connection

from transcripts.models import App

from .core.query import Terms
from .core.snippet import ELLIPSIS, MARK_CLOSE, MARK_OPEN
from .models import DocKind, SearchDoc

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


def match(scope: Scope, terms: Terms, limit: int, *, rows_only: bool) -> list[RawHit]:
    if connection.vendor == "postgresql":
        return _postgres(scope, terms, limit, rows_only)
    return _sqlite(scope, terms, limit, rows_only)


def _sqlite(scope: Scope, terms: Terms, limit: int, rows_only: bool) -> list[RawHit]:
    """Two steps: the best ``limit`` doc ids by bm25, then snippets for those alone.

    In one statement SQLite computes every result column before it sorts, so
    ``snippet()`` ran for every match (a common word: every row of the index).
    """
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
