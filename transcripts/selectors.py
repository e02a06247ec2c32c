"""Reads. Ownership: a caller app reaches only its own slots; ``""`` (the dashboard) reaches all."""

from __future__ import annotations

from typing import Any, Literal

from django.db.models import F, Q, QuerySet

from .core.content import bound_rows
from .core.fold import FoldReport
from .core.keys import is_valid_slot_name
from .models import App, Session, Slot
from .store import get_store

Caller = App | Literal[""]  # "" = a dashboard user: unrestricted
MAX_PAGE = 1000


class InvalidCursor(ValueError):
    """An ``after`` cursor that names no row of the session (rewound away, or made up)."""


def session_list(*, app: App | Literal[""] | None, search: str = "") -> QuerySet[Session]:
    """Sessions newest activity first. ``app``: that app's, ``""`` all, None the unscoped ones.

    ``app`` has no default on purpose: every caller states whose sessions it lists.
    """
    sessions = Session.objects.select_related("app", "slot")
    if app is None:
        sessions = sessions.filter(app__isnull=True)
    elif app != "":
        sessions = sessions.filter(app=app)
    if search.strip():
        term = search.strip()
        sessions = sessions.filter(Q(title__icontains=term) | Q(key__icontains=term))
    return sessions.order_by(F("last_activity").desc(nulls_last=True), "-created_at", "-pk")


def session_get_for_caller(*, name: str, caller_app: Caller) -> Slot | None:
    """The slot ``name`` if ``caller_app`` may reach it, else None (missing and foreign look alike)."""
    if not is_valid_slot_name(name):
        return None
    slots = Slot.objects.select_related("session", "app").filter(name=name)
    if caller_app != "":
        slots = slots.filter(app=caller_app)  # an unscoped slot is closed to every app
    return slots.first()


def _cursor(row: dict[str, Any], occurrence: int) -> str:
    ts = str(row.get("ts"))
    return ts if occurrence == 1 else f"{ts}#{occurrence}"


def _start_after(rows: list[dict[str, Any]], after: str) -> int:
    ts, _, nth = after.rpartition("#") if "#" in after else (after, "", "1")
    wanted = int(nth) if nth.isdigit() and int(nth) > 0 else 0
    seen = 0
    for index, row in enumerate(rows):
        if row.get("ts") == ts:
            seen += 1
            if seen == wanted:
                return index + 1
    raise InvalidCursor(after)


def session_transcript(
    *, key: str, after: str | None = None, limit: int = 100
) -> tuple[list[dict[str, Any]], FoldReport, str | None]:
    """One page of the folded whole session: ``(rows, report, next_cursor)``.

    Cursors are row ts values; a ts that legacy rows share gets ``#n`` (its nth bearer),
    so a page boundary between duplicates neither skips nor repeats a row. Raises
    ``SessionNotFound`` (no transcript) and ``InvalidCursor``.
    """
    view = get_store().read_session(key)
    rows = bound_rows(view.rows, view.report)  # rows nested too deep: reported, not a 500
    start = _start_after(rows, after) if after else 0
    limit = max(1, min(limit, MAX_PAGE))
    page = rows[start : start + limit]
    next_cursor = None
    if page and start + len(page) < len(rows):
        last = start + len(page) - 1
        occurrence = sum(1 for row in rows[: last + 1] if row.get("ts") == rows[last].get("ts"))
        next_cursor = _cursor(rows[last], occurrence)
    return page, view.report, next_cursor
