"""Keyset pages of a session list, O(page): ``last_activity`` descending (never-active
sessions last), then ``id`` descending, so a page boundary neither skips nor repeats a
session while others are written. A cursor is the boundary's ``(last_activity, id)``,
base64url-encoded. A page is at most two index range scans, never an OFFSET or a COUNT.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from .models import Session

PAGE_DEFAULT = 50
PAGE_MAX = 200


class InvalidListCursor(ValueError):
    """A list cursor this server did not write (or that names no valid position)."""


@dataclass(frozen=True)
class SessionPage:
    items: list[Session]
    older: str | None  # the cursor of the next page (older sessions), None at the end
    newer: str | None  # the cursor of the previous page (newer sessions), None at the top


def list_cursor(session: Session) -> str:
    when = session.last_activity.isoformat() if session.last_activity else None
    raw = json.dumps([when, session.pk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# A cursor this module issues is ~60 characters; a longer one is forged, and is refused
# before it is decoded (a deep JSON nest in a few KB ran the parser out of stack: a 500).
MAX_CURSOR_CHARS = 256


def _decode(cursor: str) -> tuple[dt.datetime | None, int]:
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError(len(cursor))
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        when, pk = json.loads(raw)
        if type(pk) is not int or pk < 1:
            raise ValueError(pk)
        if when is None:
            return None, pk
        moment = dt.datetime.fromisoformat(when)
        if moment.tzinfo is None:
            raise ValueError(when)
        return moment.astimezone(dt.UTC), pk
    except (TypeError, ValueError, OverflowError, RecursionError):  # base64's and utf-8's too
        raise InvalidListCursor(cursor[:64]) from None


def _older(sessions: QuerySet[Session], at: tuple[Any, int] | None, n: int) -> list[Session]:
    """Up to ``n`` sessions after position ``at`` (None: from the top), in list order."""
    active = sessions.filter(last_activity__isnull=False).order_by("-last_activity", "-pk")
    idle = sessions.filter(last_activity__isnull=True).order_by("-pk")
    if at is None:
        found = list(active[:n])
    elif at[0] is None:
        return list(idle.filter(pk__lt=at[1])[:n])
    else:
        when, pk = at
        # ``<=`` bounds the index range; the OR only sorts out the boundary timestamp.
        after = active.filter(last_activity__lte=when).filter(
            Q(last_activity__lt=when) | Q(pk__lt=pk)
        )
        found = list(after[:n])
    if len(found) < n:
        found += list(idle[: n - len(found)])
    return found


def _newer(sessions: QuerySet[Session], at: tuple[Any, int], n: int) -> list[Session]:
    """Up to ``n`` sessions just before position ``at``, nearest first."""
    active = sessions.filter(last_activity__isnull=False).order_by("last_activity", "pk")
    when, pk = at
    if when is None:
        found = list(sessions.filter(last_activity__isnull=True, pk__gt=pk).order_by("pk")[:n])
        if len(found) < n:
            found += list(active[: n - len(found)])
        return found
    before = active.filter(last_activity__gte=when).filter(Q(last_activity__gt=when) | Q(pk__gt=pk))
    return list(before[:n])


def session_page(
    sessions: QuerySet[Session],
    *,
    after: str | None = None,
    before: str | None = None,
    limit: int = PAGE_DEFAULT,
) -> SessionPage:
    """One page of ``sessions`` (its ordering replaced): ``after`` that cursor (older) or
    ``before`` it (newer). Raises ``InvalidListCursor``."""
    limit = max(1, min(limit, PAGE_MAX))
    if before:
        nearest = _newer(sessions, _decode(before), limit + 1)
        items = nearest[:limit][::-1]
        newer = list_cursor(items[0]) if len(nearest) > limit else None
        return SessionPage(items, list_cursor(items[-1]) if items else None, newer)
    found = _older(sessions, _decode(after) if after else None, limit + 1)
    items = found[:limit]
    older = list_cursor(items[-1]) if len(found) > limit else None
    return SessionPage(items, older, list_cursor(items[0]) if after and items else None)
