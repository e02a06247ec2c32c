"""Dashboard reads, composed from the apps' public selectors (no writes here)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db.models import QuerySet

from summaries.selectors import summary_behind
from transcripts.core.content import bound_rows
from transcripts.core.errors import SessionNotFound
from transcripts.core.fold import FoldReport
from transcripts.core.paging import TurnMarks, cursor_of, turn_marks
from transcripts.core.provenance import SOURCE_LABELS
from transcripts.core.user_turns import is_user_turn
from transcripts.models import App, Session
from transcripts.runtime import get_store
from transcripts.selectors import InvalidCursor, session_list, session_transcript

from ..search.selectors import QueryRejected, SearchHit, search_query
from .positions import Gap, Position
from .present import STATE_LABELS, Item, row_stamp, transcript_items

UNSCOPED = "-"  # the app filter's value for sessions no app owns


def app_names() -> list[str]:
    return list(App.objects.order_by("name").values_list("name", flat=True))


def dashboard_sessions(
    *, app: str = "", state: str = "", search: str = "", source: str = ""
) -> QuerySet[Session]:
    """Every session (a dashboard user is unrestricted), newest activity first. ``state``:
    an intent of the stored summary is in it; ``source``: of that origin (``SOURCE_LABELS``;
    another value is ignored)."""
    owner = _app_scope(app)
    if owner is False:
        return Session.objects.none()
    sessions = session_list(app=owner, search=search).select_related(
        "one_line_summary", "intent_summary"
    )
    if state in STATE_LABELS:
        # states is comma-joined; no state name is a substring of another.
        sessions = sessions.filter(intent_summary__states__contains=state)
    if source in SOURCE_LABELS:
        sessions = sessions.filter(source=source)
    return sessions


def mirror_behind(session: Session) -> bool:
    """Whether the session's summary mirror is behind the conversation (``summary_behind``):
    the list card and the project page read it from the list's own query."""
    mirror = getattr(session, "intent_summary", None)
    return mirror is not None and summary_behind(
        moved=(mirror.sig, mirror.gen) != (session.sig, session.gen),
        user_turns_now=session.user_turns,
        covers=mirror.user_turns,
    )


def _app_scope(app: str) -> App | Literal["", False] | None:
    """ "" all, None the unowned sessions (``UNSCOPED``), else that app; False for an
    unknown app name (it matches nothing)."""
    if app == UNSCOPED:
        return None
    if not app:
        return ""
    found = App.objects.filter(name=app).first()
    return False if found is None else found


SEARCH_HITS = 20  # text matches shown above the list


def dashboard_search(*, app: str = "", search: str = "") -> list[SearchHit]:
    """What was said that matches ``search``, in the sessions the app filter shows. Text
    with no word to search for matches nothing here (the title search still runs)."""
    scope = _app_scope(app)
    if scope is False:
        return []
    try:
        return search_query(scope, search, SEARCH_HITS)
    except QueryRejected:
        return []


WINDOW_FIRST, WINDOW_PAGE = 100, 500  # rows per cursor read while collecting rows
LIVE_MAX_ROWS = 50_000  # rows per live read; the page's next read continues from the last


@dataclass(slots=True)
class TurnWindow:
    """The rows of turns ``first..last`` (the rows before turn 1 go with turn 1)."""

    rows: list[dict[str, Any]]
    report: FoldReport
    missing: bool = False
    first: int = 1  # the first turn shown; turns before it are not in ``rows``
    last: int = 0  # the last turn shown (0: none)
    total: int = 0  # the session's user turns (the summarizer's numbering)
    after: str = ""  # the cursor of the row before ``rows`` ("" = the session's first row)
    seen: Counter[str] = field(default_factory=Counter)  # ts bearers before ``rows``


def session_turn_window(key: str, first: int, last: int | None) -> TurnWindow:
    """Turns ``first..last`` (``last`` None: to the end; ``first`` <= 0 counts from the end)
    at O(window) through the turn marks; where the marks cannot say (position hints, legacy
    ts, a revised role or content) the whole session is folded and sliced, same answer."""
    try:
        marks = turn_marks(get_store(), key)
    except SessionNotFound:
        return TurnWindow([], FoldReport(), missing=True)
    if marks is not None:
        try:
            return _window_marked(key, marks, first, last)
        except (InvalidCursor, SessionNotFound):
            pass  # rewritten since the marks were read: the fold answers
    return _window_folded(key, first, last)


def _span(total: int, first: int, last: int | None) -> tuple[int, int]:
    if first <= 0:  # counted from the end: 0 is the last turn, -19 the 20th from last
        first += total
    first = max(1, min(first, total or 1))
    end = total if last is None else max(first, min(last, total))
    return first, end


def _window_marked(key: str, marks: TurnMarks, first: int, last: int | None) -> TurnWindow:
    total = marks.total
    first, end = _span(total, first, last)
    after = marks.mark(first).after if total and first > 1 else None
    stop = marks.mark(end + 1).ts if end < total else None  # turn end + 1's row
    rows = rows_after(key, after, stop=stop)
    return TurnWindow(rows, marks.report, False, first, end, total, after or "")


def rows_after(
    key: str, after: str | None, *, stop: str | None = None, max_rows: int | None = None
) -> list[dict[str, Any]]:
    """The folded rows after the cursor ``after`` (None: from the first), a page at a time:
    O(rows read). Stops before the row whose ts is ``stop``, or once ``max_rows`` came."""
    rows: list[dict[str, Any]] = []
    cursor, limit = after, WINDOW_FIRST
    while True:
        page, _report, cursor = session_transcript(key=key, after=cursor, limit=limit)
        for row in page:
            if stop is not None and row.get("ts") == stop:
                return rows
            rows.append(row)
        if not cursor or (max_rows is not None and len(rows) >= max_rows):
            return rows
        limit = WINDOW_PAGE


def _window_folded(key: str, first: int, last: int | None) -> TurnWindow:
    try:
        view = get_store().read_session(key)
    except SessionNotFound:
        return TurnWindow([], FoldReport(), missing=True)
    # Rows nested too deep (imported) are shown with a marker and reported, never a 500.
    rows, report = bound_rows(view.rows, view.report), view.report
    starts = [i for i, row in enumerate(rows) if is_user_turn(row)]
    total = len(starts)
    first, end = _span(total, first, last)
    start = starts[first - 1] if total and first > 1 else 0
    stop = starts[end] if end < total else len(rows)
    seen = Counter(row_stamp(row) for row in rows[:start])
    window = TurnWindow(rows[start:stop], report, False, first, end, total, seen=seen)
    if start:
        stamp = row_stamp(rows[start - 1])
        window.after = cursor_of(stamp, seen[stamp])
    return window


def window_items(window: TurnWindow) -> tuple[list[Item], int]:
    return transcript_items(
        window.rows, after=window.after, turns_before=window.first - 1, seen=window.seen
    )


@dataclass(slots=True)
class Opening:
    window: TurnWindow
    items: list[Item]
    gap: Gap | None
    position: Position


def transcript_opening(key: str, turns: int) -> Opening:
    window = session_turn_window(key, 1 - turns, None)
    items, through = window_items(window)
    gap = Gap(1, window.first - 1) if window.total and window.first > 1 else None
    start = Position.start(window.after, window.first - 1)
    return Opening(window, items, gap, start.advance(items, through))


@dataclass(slots=True)
class LiveRows:
    items: list[Item]
    replace: str  # the first page row these replace, and every row after it ("": appended)
    position: Position
    total: int  # user turns through the last row


def transcript_live(key: str, position: Position, reasons: list[str]) -> LiveRows:
    start, replaced = position.read_from(reasons)
    rows = rows_after(key, start.after or None, max_rows=LIVE_MAX_ROWS)
    items, through = transcript_items(rows, after=start.after, turns_before=start.turns)
    return LiveRows(items, replaced, start.advance(items, through), through)


@dataclass(slots=True)
class GapRows:
    items: list[Item]
    before: Gap | None
    after: Gap | None
    total: int


def transcript_gap(key: str, gap: Gap, first: int, last: int) -> GapRows:
    """Turns ``first..last`` of ``gap``; turns that are gone (a rewind) leave nothing."""
    window = session_turn_window(key, first, last)
    if window.missing:
        raise SessionNotFound(key)
    if first > window.total:
        return GapRows([], None, None, window.total)
    items, _through = window_items(window)
    before, after = gap.split(window.first, window.last)
    return GapRows(items, before, after, window.total)
