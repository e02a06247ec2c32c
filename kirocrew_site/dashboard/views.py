"""Dashboard pages. Views translate the request and call selectors/services; no logic here."""

from __future__ import annotations

import json
import os
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from summaries.core.config import ENV_ENABLED, ConfigWriteError, write_enabled
from summaries.core.gate import INCOGNITO_MEMORY_MODES
from summaries.runtime import summary_config
from summaries.selectors import summary_body
from transcripts.core.turns import INJECTED_PREFIXES
from transcripts.selectors import session_get_for_caller

from .present import ROLE_LABELS, STATE_LABELS, fold_warning, state_chips, transcript_items
from .selectors import UNSCOPED, app_names, dashboard_sessions, session_rows

PAGE_SIZE = 50


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    enabled = summary_config().enabled
    search = request.GET.get("q", "").strip()[:200]
    app = request.GET.get("app", "")
    state = request.GET.get("state", "") if enabled else ""
    sessions = dashboard_sessions(app=app, state=state, search=search)
    page = Paginator(sessions, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = []
    for session in page.object_list:
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
            }
        )
    filtered = bool(search or app or state)
    query = request.GET.copy()
    query.pop("page", None)
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
    found = session_get_for_caller(name=slot, caller_app="")
    if found is None:
        raise Http404("no such session")
    rows, report, missing = session_rows(found.session.key)
    items, user_turns = transcript_items(rows)
    user: Any = request.user
    memory_mode = found.session.memory_mode or ""
    page_state = {
        "slot": found.name,
        "running": found.running,
        "staff": bool(user.is_staff),
        "restricted": memory_mode.lower() in INCOGNITO_MEMORY_MODES,
        "cursor": items[-1].cursor if items else "",
        "userTurns": user_turns,
        "injectedPrefixes": list(INJECTED_PREFIXES),
        # The live rows and the panel label with the server's tables (present.py).
        "roleLabels": ROLE_LABELS,
        "stateLabels": STATE_LABELS,
        "summary": summary_body(found),
    }
    return render(
        request,
        "dashboard/session_detail.html",
        {
            "slot": found,
            "session": found.session,
            "items": items,
            "user_turns": user_turns,
            "warning": fold_warning(report),
            "missing": missing,
            "page_state": page_state,
        },
    )


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
            "config_path": path,
            "env_override": os.environ.get(ENV_ENABLED),
            "env_name": ENV_ENABLED,
            "model": settings.KIROCREW_SUMMARY_MODEL,
        },
    )
