"""Dashboard pages (sessions, a session, projects, settings): views translate the request
and call the selectors and services; no logic here. The settings page is staff only."""

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

from summaries.api import BACKEND_REFUSALS
from summaries.core.config import ConfigWriteError, effective_spec, write_enabled
from summaries.core.gate import is_restricted
from summaries.envconfig import ENV_ENABLED
from summaries.runtime import (
    ChoiceRefused,
    backend_choice_parse,
    backend_choice_store,
    backend_options,
    backend_test,
    summary_backend_choice,
    summary_config,
)
from summaries.selectors import summary_body
from transcripts.core.errors import SessionNotFound
from transcripts.core.provenance import SOURCE_LABELS, short_project
from transcripts.core.words import counted
from transcripts.listing import InvalidListCursor, session_page
from transcripts.selectors import InvalidCursor, session_get_for_caller

from ..middleware import json_error
from .markdown import render_inline
from .positions import Gap, InvalidToken, Position, gap_request
from .present import (
    EVIDENCE_LABELS,
    NO_EVIDENCE,
    STATE_LABELS,
    Timeline,
    fold_warning,
    panel_intents,
    panel_texts,
    state_chips,
    timeline_layout,
    written_by,
)
from .projects import project_get, project_list
from .selectors import (
    UNSCOPED,
    app_names,
    dashboard_search,
    dashboard_sessions,
    mirror_behind,
    transcript_gap,
    transcript_live,
    transcript_opening,
)

PAGE_SIZE = 50
MAX_GAP_TURNS = 200  # turns per gap load, whatever the page opens with


def _page_turns() -> int:
    return max(1, int(settings.KIROCREW_SESSION_PAGE_TURNS))


def _param(request: HttpRequest, name: str) -> str:
    # NUL is dropped from filters: PostgreSQL cannot compare text holding it (a 500), and
    # no title, key or app name can contain one (the content rule refuses it on input).
    return request.GET.get(name, "").replace("\x00", "")


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    enabled = summary_config().enabled
    search = _param(request, "q").strip()[:200]
    app = _param(request, "app")
    state = _param(request, "state") if enabled else ""
    asked_source = request.GET.get("source", "")
    # An unknown origin (a URL edited by hand) filters nothing, and the page says so.
    source = asked_source if asked_source in SOURCE_LABELS else ""
    unknown_source = bool(asked_source) and not source
    sessions = dashboard_sessions(app=app, state=state, search=search, source=source)
    # A cursor that is not ours (edited by hand) shows the first page.
    try:
        page = session_page(
            sessions,
            after=request.GET.get("after") or None,
            before=request.GET.get("before") or None,
            limit=PAGE_SIZE,
        )
    except InvalidListCursor:
        page = session_page(sessions, limit=PAGE_SIZE)
    rows = [_card(session, enabled) for session in page.items]
    hits = dashboard_search(app=app, search=search) if search else []
    query = request.GET.copy()  # the filters, carried by the Older / Newer links
    for cursor in ("page", "after", "before"):
        query.pop(cursor, None)
    return render(
        request,
        "dashboard/session_list.html",
        {
            "rows": rows,
            "hits": hits,
            "page": page,
            "query": query.urlencode(),
            "search": search,
            "app": app,
            "state": state,
            "source": source,
            "sources": SOURCE_LABELS.items(),
            "unknown_source": unknown_source,
            "asked_source": asked_source.replace("\x00", "").strip()[:40],
            "apps": app_names(),
            "unscoped": UNSCOPED,
            "states": STATE_LABELS.items(),
            "summaries_enabled": enabled,
            "filtered": bool(search or app or state or source),
        },
    )


@login_required
@require_GET
def session_detail(request: HttpRequest, slot: str) -> HttpResponse:
    found = _dashboard_slot(slot)
    opening = transcript_opening(found.session.key, _page_turns())
    user: Any = request.user
    panel = _panel_body(found)
    page_state = {
        "slot": found.name,
        "running": found.running,
        "staff": bool(user.is_staff),
        "restricted": is_restricted(found.session.memory_mode),
        "cursor": opening.position.token(),  # opaque: the JS echoes it to the rows view
        "stateLabels": STATE_LABELS,
        "evidenceLabels": EVIDENCE_LABELS,
        "noEvidence": NO_EVIDENCE,
        "summary": panel,
    }
    return render(
        request,
        "dashboard/session_detail.html",
        {
            "slot": found,
            "session": found.session,
            "items": opening.items,
            "gap": opening.gap,
            "turns_text": counted(opening.window.total, "turn"),
            "warning": fold_warning(opening.window.report),
            "missing": opening.window.missing,
            "page_state": page_state,
            "timeline": _timeline(found, panel),
        },
    )


def _card(session: Any, enabled: bool) -> dict[str, Any]:
    intents = getattr(session, "intent_summary", None) if enabled else None
    gist = getattr(session, "one_line_summary", None) if enabled else None
    return {
        "session": session,
        "slot": getattr(session, "slot", None),
        "gist": gist.summary if gist else "",
        "chips": state_chips(intents.states) if intents else [],
        "behind": enabled and mirror_behind(session),
        "project": short_project(session.project) if session.project else "",
    }


@login_required
@require_GET
def session_card_partial(request: HttpRequest, slot: str) -> JsonResponse:
    """``{html}``: the card the list shows, swapped in when a frame says the session changed."""
    session = dashboard_sessions().filter(slot__name=slot).first()
    if session is None:
        raise Http404("no such session")
    context = {"row": _card(session, summary_config().enabled)}
    return JsonResponse({"html": render_to_string("dashboard/partials/session_card.html", context)})


def _dashboard_slot(name: str) -> Any:
    found = session_get_for_caller(name=name, caller_app="")
    if found is None:
        raise Http404("no such session")
    return found


def _panel_body(found: Any) -> dict[str, Any]:
    """The summary API's body plus ``rendered`` (its texts as sanitized inline HTML)."""
    body = summary_body(found)
    return {
        **body,
        "intents": panel_intents(body.get("intents")),
        "rendered": {text: render_inline(text) for text in panel_texts(body)},
        "written_by": written_by(body.get("model")),
    }


@login_required
@require_GET
def session_rows_partial(request: HttpRequest, slot: str) -> JsonResponse:
    """Rows through the page's own partials (as after a reload): those after ``at`` for the
    frames ``why`` names, with ``replace`` (the first page row they replace); or with
    ``gap`` (and ``target``, a link's turn), a gap's turns and its smaller gap markers."""
    found = _dashboard_slot(slot)
    token = request.GET.get("at", "")
    try:
        if "gap" in request.GET:
            return _gap_rows(request, found)
        position = Position.parse(token) if token else Position.start("", 0)
    except InvalidToken:
        return json_error(422, "invalid_request", "not a position or gap this page was given")
    try:
        live = transcript_live(found.session.key, position, request.GET.getlist("why"))
    except InvalidCursor:
        return json_error(422, "invalid_cursor", "the position names no row of this session")
    except SessionNotFound:
        raise Http404("no such session") from None
    html = render_to_string("dashboard/partials/rows.html", {"items": live.items})
    return JsonResponse(
        {
            "html": html,
            "replace": live.replace,
            "cursor": live.position.token(),
            "turns_text": counted(live.total, "turn"),
        }
    )


def _gap_rows(request: HttpRequest, found: Any) -> JsonResponse:
    """``gap``: the marker the answer's ``html`` replaces ("": no gap sent holds the target)."""
    gaps = [Gap.parse(token) for token in request.GET.getlist("gap")]
    size = min(_page_turns(), MAX_GAP_TURNS)
    chosen = gap_request(gaps, request.GET.get("target", ""), size)
    if chosen is None:
        return JsonResponse({"gap": "", "html": ""})
    gap, first, last = chosen
    try:
        loaded = transcript_gap(found.session.key, gap, first, last)
    except SessionNotFound:
        raise Http404("no such session") from None
    context = {"items": loaded.items, "before": loaded.before, "after": loaded.after}
    html = render_to_string("dashboard/partials/rows.html", context)
    return JsonResponse(
        {"gap": gap.token(), "html": html, "turns_text": counted(loaded.total, "turn")}
    )


@login_required
@require_GET
def session_summary_partial(request: HttpRequest, slot: str) -> JsonResponse:
    return JsonResponse(_panel_body(_dashboard_slot(slot)))


@login_required
@require_GET
def session_timeline_partial(request: HttpRequest, slot: str) -> JsonResponse:
    """``{html}``: the intent timeline, swapped in when a frame says the summary changed."""
    try:
        found = _dashboard_slot(slot)
    except Http404:
        return json_error(404, "slot_not_found", "no such session")
    context = {"timeline": _timeline(found, summary_body(found))}
    return JsonResponse({"html": render_to_string("dashboard/partials/timeline.html", context)})


def _timeline(found: Any, body: dict[str, Any]) -> Timeline | None:
    """None while summaries are off (the flag gates reads)."""
    if not body.get("enabled"):
        return None
    covers = body.get("covers_through_turn")
    return timeline_layout(
        panel_intents(body.get("intents")),
        turns=found.session.user_turns,
        covered=covers if isinstance(covers, int) else None,
    )


@login_required
@require_GET
def project_index(request: HttpRequest) -> HttpResponse:
    app = _param(request, "app")
    return render(
        request,
        "dashboard/projects.html",
        {"projects": project_list(app=app), "app": app, "unscoped": UNSCOPED},
    )


@login_required
@require_GET
def project_detail(request: HttpRequest) -> HttpResponse:
    """``?path=<the project>``; ``?path=`` (empty) is "No project"."""
    if "path" not in request.GET:
        raise Http404("which project? (?path=)")
    app = _param(request, "app")
    project = project_get(path=request.GET["path"], app=app)
    if project is None:
        raise Http404("no session of this project")
    return render(
        request, "dashboard/project.html", {"project": project, "app": app, "unscoped": UNSCOPED}
    )


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
    chosen = summary_backend_choice()
    return render(
        request,
        "dashboard/settings.html",
        {
            "config": [(key, json.dumps(value)) for key, value in cfg.to_dict().items()],
            "enabled": cfg.enabled,
            "env_override": os.environ.get(ENV_ENABLED),
            "env_name": ENV_ENABLED,
            "model": effective_spec(chosen, settings.KIROCREW_SUMMARY_MODEL),
            "in_use_note": _in_use_note(chosen is not None),
            "configured": settings.KIROCREW_SUMMARY_MODEL,
            "chosen": chosen,
            "options": backend_options(),
        },
    )


def _in_use_note(picked: bool) -> str:
    configured = settings.KIROCREW_SUMMARY_MODEL
    if picked:
        return f"picked here; KIROCREW_SUMMARY_MODEL is {configured}"
    return "KIROCREW_SUMMARY_MODEL; nothing picked here yet"


def _staff_post(request: HttpRequest) -> JsonResponse | None:
    user: Any = request.user
    if not user.is_authenticated:
        return json_error(401, "login_required", "log in first")
    if not user.is_staff:
        return json_error(403, "staff_only", "only staff choose the summary backend")
    return None


@require_http_methods(["POST"])
def settings_backend_test(request: HttpRequest) -> JsonResponse:
    """One short request through the posted backend: its name and latency, or the error
    in plain words. Sends no conversation."""
    if (refused := _staff_post(request)) is not None:
        return refused
    try:
        choice = backend_choice_parse(request.POST)
    except ChoiceRefused as exc:
        return json_error(422, "invalid_backend", str(exc))
    result = backend_test(choice)
    if result.ok:
        shape = "" if result.json_reply else " (its reply was not JSON)"
        text = f"{result.model} answered in {result.latency_ms} ms{shape}."
    else:
        # The summary API's own words for a backend failure of this type.
        found = BACKEND_REFUSALS.get(result.error_type)
        lead = found[2] if found else "the summary model failed"
        text = f"{result.model} failed: {lead} ({result.error})."
    return JsonResponse(
        {"ok": result.ok, "model": result.model, "latency_ms": result.latency_ms, "text": text}
    )


@require_http_methods(["POST"])
def settings_backend_use(request: HttpRequest) -> JsonResponse:
    """Store the posted backend as the one that writes summaries (``reset``: forget the
    pick, back to KIROCREW_SUMMARY_MODEL). Says so when summaries are off."""
    if (refused := _staff_post(request)) is not None:
        return refused
    reset = request.POST.get("reset") == "1"
    try:
        choice = None if reset else backend_choice_parse(request.POST)
    except ChoiceRefused as exc:
        return json_error(422, "invalid_backend", str(exc))
    try:
        backend_choice_store(choice)
    except (ConfigWriteError, OSError) as exc:
        return json_error(409, "config_not_written", f"config.json was not changed: {exc}")
    spec = effective_spec(choice, settings.KIROCREW_SUMMARY_MODEL)
    enabled = summary_config().enabled
    text = (
        f"Summaries are now written by {spec}."
        if choice
        else f"Back to the default, {spec} (KIROCREW_SUMMARY_MODEL)."
    )
    if not enabled:
        text += " Session summaries are off, so nothing is written until you turn them on."
    return JsonResponse(
        {
            "ok": True,
            "model": spec,
            "note": _in_use_note(choice is not None),
            "enabled": enabled,
            "text": text,
        }
    )
