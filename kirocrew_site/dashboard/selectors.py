"""Dashboard reads, composed from the apps' public selectors (no writes here)."""

from __future__ import annotations

from typing import Any, Literal

from django.db.models import QuerySet

from transcripts.core.content import bound_rows
from transcripts.core.errors import SessionNotFound
from transcripts.core.fold import FoldReport
from transcripts.models import App, Session
from transcripts.selectors import session_list
from transcripts.store import get_store

from .present import STATE_LABELS

UNSCOPED = "-"  # the app filter's value for sessions no app owns


def app_names() -> list[str]:
    return list(App.objects.order_by("name").values_list("name", flat=True))


def dashboard_sessions(*, app: str = "", state: str = "", search: str = "") -> QuerySet[Session]:
    """Every session (a dashboard user is unrestricted), newest activity first.

    ``app``: "" all, ``UNSCOPED`` the unowned ones, else that app's (an unknown name
    matches nothing). ``state``: only sessions whose stored summary has an intent in it.
    """
    owner: App | Literal[""] | None = ""
    if app == UNSCOPED:
        owner = None
    elif app:
        owner = App.objects.filter(name=app).first()
        if owner is None:
            return Session.objects.none()
    sessions = session_list(app=owner, search=search).select_related(
        "one_line_summary", "intent_summary"
    )
    if state in STATE_LABELS:
        # states is comma-joined; no state name is a substring of another.
        sessions = sessions.filter(intent_summary__states__contains=state)
    return sessions


def session_rows(key: str) -> tuple[list[dict[str, Any]], FoldReport, bool]:
    """The whole folded session (archives + file) once: ``(rows, report, missing)``."""
    try:
        view = get_store().read_session(key)
    except SessionNotFound:
        return [], FoldReport(), True
    # Rows nested too deep (imported) are shown with a marker and reported, never a 500.
    return bound_rows(view.rows, view.report), view.report, False
