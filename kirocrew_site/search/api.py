"""``GET /api/chat/search?q=``: the caller's own sessions' matching text, with snippets."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema

from kirocrew_site.auth import caller_of
from transcripts.api import ERRORS, ApiError, check_limit

from .selectors import LIMIT_DEFAULT, LIMIT_MAX, QueryRejected, search_query

router = Router(tags=["search"])


class SearchQueryIn(Schema):
    q: str = ""
    limit: int = LIMIT_DEFAULT


class FragmentOut(Schema):
    text: str
    hit: bool


class SearchHitOut(Schema):
    slot: str
    title: str
    kind: str
    turn: int
    ts: str
    role: str
    snippet: list[FragmentOut]


class SearchOut(Schema):
    hits: list[SearchHitOut]


@router.get(
    "/search",
    response={200: SearchOut, **ERRORS},
    operation_id="search",
    summary="Search transcript text and summaries",
    description=(
        "Every word of `q` must match (English stemming). Hits are ranked, at most `limit` "
        f"(1..{LIMIT_MAX}); each names its slot, the user turn it belongs to and the row's "
        "`ts`, with a snippet as text fragments (`hit`: a matched word). Only the caller's "
        "own sessions are searched."
    ),
)
def search(request: HttpRequest, query: Query[SearchQueryIn]) -> dict[str, Any]:
    caller = caller_of(request)
    check_limit(query.limit, LIMIT_MAX)
    try:
        hits = search_query(caller.scope, query.q, query.limit)
    except QueryRejected as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    # An app's hits are its slots' (a session without a slot has no route to read it by).
    shown = [hit for hit in hits if hit.slot or caller.app is None]
    return {
        "hits": [
            {
                "slot": hit.slot,
                "title": hit.title,
                "kind": hit.kind.value,
                "turn": hit.turn,
                "ts": hit.cursor,
                "role": hit.role,
                "snippet": [{"text": f.text, "hit": f.hit} for f in hit.snippet],
            }
            for hit in shown
        ]
    }
