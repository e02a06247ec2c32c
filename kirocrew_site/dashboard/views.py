"""Dashboard pages. Views translate the request and call selectors/services; no logic here."""

from __future__ import annotations

import json
import os
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_http_methods

from summaries.core.config import ENV_ENABLED, ConfigWriteError, write_enabled
from summaries.core.gate import INCOGNITO_MEMORY_MODES
from summaries.runtime import summary_config
from summaries.selectors import summary_body
from transcripts.core.errors import SessionNotFound
from transcripts.core.provenance import SOURCE_LABELS, short_project
from transcripts.core.words import counted
from transcripts.listing import InvalidListCursor, session_page
from transcripts.selectors import InvalidCursor, session_get_for_caller, session_transcript

from .markdown import rendered_texts
from .present import STATE_LABELS, fold_warning, panel_texts, state_chips, transcript_items
from .selectors import (
    UNSCOPED,
    TurnWindow,
    app_names,
    dashboard_sessions,
    session_rows,
    session_turn_window,
)

PAGE_SIZE = 50
ROWS_PAGE, ROWS_PAGES = 500, 100  # live rows: at most 50 000 new rows per read
MAX_TURN_RANGE = 200  # turns per on-demand read (turn_from/turn_to)


def _page_turns() -> int:
    """How many of its last turns the session page opens with (KIROCREW_SESSION_PAGE_TURNS)."""
    return max(1, int(settings.KIROCREW_SESSION_PAGE_TURNS))


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    enabled = summary_config().enabled
    # NUL is dropped from filters: PostgreSQL cannot compare text holding it (a 500), and
    # no title, key or app name can contain one (the content rule refuses it on input).
    search = request.GET.get("q", "").replace("\x00", "").strip()[:200]
    app = request.GET.get("app", "").replace("\x00", "")
    state = request.GET.get("state", "").replace("\x00", "") if enabled else ""
    source = request.GET.get("source", "")
    source = source if source in SOURCE_LABELS else ""  # an unknown origin filters nothing
    sessions = dashboard_sessions(app=app, state=state, search=search, source=source)
    # Keyset pages (transcripts/listing.py): a page costs the same at 10 or 10 000
    # sessions. A cursor that is not ours (edited by hand) shows the first page.
    try:
        page = session_page(
            sessions,
            after=request.GET.get("after") or None,
            before=request.GET.get("before") or None,
            limit=PAGE_SIZE,
        )
    except InvalidListCursor:
        page = session_page(sessions, limit=PAGE_SIZE)
    rows = []
    for session in page.items:
        intents = getattr(session, "intent_summary", None) if enabled else None
        gist = getattr(session, "one_line_summary", None) if enabled else None
        rows.append(
            {
                "session": session,
                "slot": getattr(session, "slot", None),
                "gist": gist.summary if gist else "",
                "chips": state_chips(intents.states) if intents else [],
                "behind": intents is not None
                and (intents.sig, intents.gen) != (session.sig, session.gen),
                "project": short_project(session.project) if session.project else "",
            }
        )
    filtered = bool(search or app or state or source)
    query = request.GET.copy()  # the filters, carried by the Older / Newer links
    for cursor in ("page", "after", "before"):
        query.pop(cursor, None)
    return render(
        request,
        "dashboard/session_list.html",
        {
            "rows": rows,
            "page": page,
            "query": query.urlencode(),
            "search": search,
            "app": app,
            "state": state,
            "source": source,
            "sources": SOURCE_LABELS.items(),
            "apps": app_names(),
            "unscoped": UNSCOPED,
            "states": STATE_LABELS.items(),
            "summaries_enabled": enabled,
            "filtered": filtered,
        },
    )


@login_required
@require_GET
def session_detail(request: HttpRequest, slot: str) -> HttpResponse:
    found = _dashboard_slot(slot)
    # A long session opens at its last turns; earlier ones load on demand (the rows view).
    window = session_turn_window(found.session.key, 1 - _page_turns(), None)
    items = _window_items(window)
    user_turns = window.total
    user: Any = request.user
    memory_mode = found.session.memory_mode or ""
    page_state = {
        "slot": found.name,
        "running": found.running,
        "staff": bool(user.is_staff),
        "restricted": memory_mode.lower() in INCOGNITO_MEMORY_MODES,
        "cursor": items[-1].cursor if items else window.after,
        "userTurns": user_turns,
        "pageTurns": _page_turns(),
        # The panel labels with the server's table (present.py).
        "stateLabels": STATE_LABELS,
        "summary": _panel_body(found),
    }
    return render(
        request,
        "dashboard/session_detail.html",
        {
            "slot": found,
            "session": found.session,
            "items": items,
            "turns_text": counted(user_turns, "turn"),
            "earlier": window.first - 1 if window.total else 0,
            "earlier_text": counted(window.first - 1, "turn"),
            "gap_cursor": window.after,
            "warning": fold_warning(window.report),
            "missing": window.missing,
            "page_state": page_state,
        },
    )


def _window_items(window: TurnWindow) -> list[Any]:
    items, _last = transcript_items(
        window.rows, after=window.after, turns_before=window.first - 1, seen=window.seen
    )
    return items


def _dashboard_slot(name: str) -> Any:
    found = session_get_for_caller(name=name, caller_app="")
    if found is None:
        raise Http404("no such session")
    return found


def _panel_body(found: Any) -> dict[str, Any]:
    """The summary API's body plus ``rendered``: its texts as sanitized inline HTML."""
    body = summary_body(found)
    return {**body, "rendered": rendered_texts(panel_texts(body))}


@login_required
@require_GET
def session_rows_partial(request: HttpRequest, slot: str) -> JsonResponse:
    """Rows after ``after`` rendered by the same partial as the page, for the live transcript.

    With ``after`` the rows come a page at a time through the cursor reader (O(new rows),
    not a fold of the whole session per pushed row) and ``turns`` (the turns the page shows
    before the cursor) continues the numbering; without it the whole session is folded, as
    a page load does. Either way the rows and the header's count read as after a reload.
    """
    found = _dashboard_slot(slot)
    if "turn_from" in request.GET or "turn_to" in request.GET:
        return _turn_range(request, found)
    after = request.GET.get("after", "")
    if not after:
        rows, _report, _missing = session_rows(found.session.key)
        items, user_turns = transcript_items(rows)
    else:
        before = request.GET.get("turns", "")
        if not before.isdigit():
            return _json_error(422, "invalid_request", "turns must be a whole number")
        try:
            rows = _rows_after(found.session.key, after)
        except InvalidCursor:
            return _json_error(422, "invalid_cursor", "after names no row of this session")
        except SessionNotFound:
            raise Http404("no such session") from None
        items, user_turns = transcript_items(rows, after=after, turns_before=int(before))
    html = "".join(render_to_string("dashboard/partials/row.html", {"item": i}) for i in items)
    return JsonResponse(
        {
            "html": html,
            "cursor": items[-1].cursor if items else after,
            "turns": user_turns,
            "turns_text": counted(user_turns, "turn"),
        }
    )


def _turn_range(request: HttpRequest, found: Any) -> JsonResponse:
    """Turns ``turn_from..turn_to`` (at most MAX_TURN_RANGE) for the page's gaps and links.

    ``first``/``last`` say which turns came (``last`` 0: the session has none in range);
    ``before`` is the cursor of the row before them, as the page's gap markers carry it.
    """
    start, end = request.GET.get("turn_from", ""), request.GET.get("turn_to", "")
    if not (start.isdigit() and end.isdigit()) or not 1 <= int(start) <= int(end):
        return _json_error(
            422, "invalid_request", "turn_from and turn_to must be whole numbers, 1 <= from <= to"
        )
    first = int(start)
    last = min(int(end), first + MAX_TURN_RANGE - 1)
    window = session_turn_window(found.session.key, first, last)
    if window.missing:
        raise Http404("no such session")
    if first > window.total:  # no such turn (any more): nothing to insert
        empty = {"html": "", "cursor": "", "before": "", "first": first, "last": 0}
        return JsonResponse(
            {**empty, "turns": window.total, "turns_text": counted(window.total, "turn")}
        )
    items = _window_items(window)
    html = "".join(render_to_string("dashboard/partials/row.html", {"item": i}) for i in items)
    return JsonResponse(
        {
            "html": html,
            "cursor": items[-1].cursor if items else window.after,
            "before": window.after,
            "first": window.first,
            "last": window.last,
            "turns": window.total,
            "turns_text": counted(window.total, "turn"),
        }
    )


def _rows_after(key: str, after: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cursor: str | None = after
    for _ in range(ROWS_PAGES):
        page, _report, cursor = session_transcript(key=key, after=cursor, limit=ROWS_PAGE)
        rows += page
        if not cursor:
            break
    return rows


def _json_error(status: int, code: str, error: str) -> JsonResponse:
    return JsonResponse({"error": error, "code": code}, status=status)


@login_required
@require_GET
def session_summary_partial(request: HttpRequest, slot: str) -> JsonResponse:
    """The summary panel's read: the API body with its texts rendered (see _panel_body)."""
    return JsonResponse(_panel_body(_dashboard_slot(slot)))


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    return redirect(static("favicon.svg"), permanent=True)


@login_required
@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    user: Any = request.user
    if not user.is_staff:
        raise PermissionDenied("staff only")
    path = settings.KIROCREW_CONFIG_PATH
    if request.method == "POST":
        wanted = request.POST.get("enabled")
        if wanted not in {"on", "off"}:
            messages.error(request, "Choose on or off.")
        else:
            try:
                write_enabled(path, wanted == "on")
            except (ConfigWriteError, OSError) as exc:
                messages.error(request, f"config.json was not changed: {exc}")
            else:
                messages.success(request, f"Session summaries turned {wanted} in {path.name}.")
        return redirect("dashboard:settings")
    cfg = summary_config()
    return render(
        request,
        "dashboard/settings.html",
        {
            "config": [(key, json.dumps(value)) for key, value in cfg.to_dict().items()],
            "enabled": cfg.enabled,
            "env_override": os.environ.get(ENV_ENABLED),
            "env_name": ENV_ENABLED,
            "model": settings.KIROCREW_SUMMARY_MODEL,
        },
    )
