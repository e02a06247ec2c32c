"""Reads. Ownership: a caller app reaches only its own slots; ``""`` (the dashboard) reaches all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from django.db.models import F, Q, QuerySet

from .core.content import bound_rows
from .core.fold import FoldReport
from .core.keys import is_valid_slot_name
from .core.paging import InvalidCursor, cursor_of, parse_cursor, read_page
from .listing import SessionPage, session_page
from .models import App, Session, Slot
from .runtime import get_store

Caller = App | Literal[""]  # "" = a dashboard user: unrestricted
MAX_PAGE = 1000
__all__ = ["InvalidCursor"]  # defined with the paging reader; the API catches it from here


def session_list(*, app: Caller | None, search: str = "") -> QuerySet[Session]:
    """Sessions newest activity first. ``app`` (no default: every caller states it): that
    app's, ``""`` all, None the unscoped ones."""
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
    """The slot ``name`` if ``caller_app`` may reach it, else None (missing, foreign alike)."""
    if not is_valid_slot_name(name):
        return None
    slots = Slot.objects.select_related("session", "app").filter(name=name)
    if caller_app != "":
        slots = slots.filter(app=caller_app)  # an unscoped slot is closed to every app
    return slots.first()


def _start_after(rows: list[dict[str, Any]], after: str) -> int:
    ts, wanted = parse_cursor(after)
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
    """One page of the folded session: ``(rows, report, next_cursor)``. Cursors are row ts
    values; a ts that legacy rows share gets ``#n`` (its nth bearer), so a page boundary
    between duplicates neither skips nor repeats a row. O(page) through the offset index
    (``core/paging.py``); the whole fold answers only what the index cannot."""
    limit = max(1, min(limit, MAX_PAGE))
    store = get_store()
    fast = read_page(store, key, after, limit)
    if fast is not None:
        # Rows nested too deep: bounded and reported, for the rows of this page.
        return bound_rows(fast.rows, fast.report), fast.report, fast.next
    view = store.read_session(key)
    rows = view.rows
    start = _start_after(rows, after) if after else 0
    page = bound_rows(rows[start : start + limit], view.report)
    next_cursor = None
    if page and start + len(page) < len(rows):
        last = start + len(page) - 1
        ts = rows[last].get("ts")
        occurrence = sum(1 for row in rows[: last + 1] if row.get("ts") == ts)
        next_cursor = cursor_of(ts, occurrence)
    return page, view.report, next_cursor


def slot_list_page(*, scope: Caller, cursor: str | None, limit: int) -> SessionPage:
    """One keyset page of own sessions with a slot, joined with what the slot extras read
    (one query per page). Raises ``InvalidListCursor``."""
    related = ("slot__app", *(rel for extra in _slot_extras.values() for rel in extra.related))
    slots = session_list(app=scope).filter(slot__isnull=False).select_related(*related)
    return session_page(slots, after=cursor, limit=limit)


# Fields another app adds to every slot payload (``api.slot_payload``) without transcripts
# importing it: a SlotExtra registered in its AppConfig.ready(). Each field is declared on
# SlotOut with a default, so the payload keeps its shape without it.
@dataclass(frozen=True, slots=True)
class SlotExtra:
    name: str  # registering the same name again replaces it (a reloaded AppConfig)
    # Relations of Session the list joins, so a page of slots stays one query.
    related: tuple[str, ...]
    fields: Callable[[Session], dict[str, Any]]  # read from the session and what it joined


_slot_extras: dict[str, SlotExtra] = {}


def slot_extra_register(extra: SlotExtra) -> None:
    _slot_extras[extra.name] = extra


def slot_extra_fields(session: Session) -> dict[str, Any]:
    return {k: v for extra in _slot_extras.values() for k, v in extra.fields(session).items()}
