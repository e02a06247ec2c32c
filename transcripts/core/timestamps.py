"""Transcript ``ts`` values: offset-aware ISO 8601 strings, strictly increasing per file (the
original's ``datetime.now().astimezone().isoformat()``, moved forward by 1 µs when the clock
has not passed the previous row). Legacy naive rows are read as local time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

ONE_MICROSECOND = timedelta(microseconds=1)
# A day of margin either side: a backend converting to its own time zone stays in range.
_FIRST_DAY, _LAST_DAY = date(1, 1, 2), date(9999, 12, 30)
_UTC_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z")


def now_local() -> datetime:
    return datetime.now().astimezone()


def parse_ts(value: object) -> datetime | None:
    """Parse a transcript ts; naive values are local time; anything unusable is None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.astimezone()


def monotonic_ts(previous: object, now: datetime | None = None) -> str:
    """The next stamp: ``now``, or ``previous + 1µs`` when the clock has not moved past it."""
    current = (now or now_local()).astimezone()
    prior = parse_ts(previous)
    if prior is not None and current <= prior:
        # Keep the previous row's offset so the file stays readable to a person.
        current = (prior + ONE_MICROSECOND).astimezone(prior.tzinfo)
    return current.isoformat()


def ts_sort_key(value: object) -> tuple[int, float]:
    parsed = parse_ts(value)
    return (0, parsed.timestamp()) if parsed is not None else (1, 0.0)


def ts_strictly_after(current: str, previous: str) -> bool | None:
    """Whether ``current`` is later than ``previous`` (None: either unparseable). Same-length
    stamps with the same offset compare as strings: no datetime parse on the fold's hot path.
    """
    if len(current) == len(previous) >= 6 and current[-6:] == previous[-6:] and current[-6] in "+-":
        return current > previous
    a, b = parse_ts(current), parse_ts(previous)
    if a is None or b is None:
        return None
    return a > b


def storable_ts(value: Any) -> datetime | None:
    """``parse_ts``, but None for a stamp no database column can take: a file's
    ``0001-01-01T00:00:00+14:00`` is a year-0 instant in UTC (OverflowError on save)."""
    parsed = parse_ts(value)
    if parsed is None:
        return None
    try:
        utc = parsed.astimezone(UTC)
    except OverflowError:
        return None
    return parsed if _FIRST_DAY <= utc.date() <= _LAST_DAY else None


def newest_ts(values: Iterable[Any]) -> datetime | None:
    texts = list(values)
    # One agent's stamps share a form ("2026-11-30T10:27:00.000Z"): when every value is
    # a UTC stamp of one length, the newest is the greatest string, parsed once (a parse
    # per row was most of a session's cost here).
    utc = _UTC_STAMP.fullmatch
    # (texts[0] is checked first, so len() only ever sees strings)
    if texts and all(type(t) is str and len(t) == len(texts[0]) and utc(t) for t in texts):
        newest = storable_ts(max(texts))  # one form: strings order as times
        if newest is not None:
            return newest
    parsed = [p for p in map(storable_ts, texts) if p is not None]
    return max(parsed) if parsed else None


def source_ts(row: Mapping[str, Any]) -> object:
    """An imported row's ``meta.source_ts``: when the agent wrote the record (its ``ts``
    is when it was imported); None for any other row."""
    meta = row.get("meta")
    return meta.get("source_ts") if type(meta) is dict else None


def newest_activity(
    rows: Iterable[Mapping[str, Any]], stamps: Iterable[Any], *, agent: bool
) -> datetime | None:
    """A session's last activity: an agent session's (Claude Code, Codex) newest record as
    the agent stamped it, any other's newest row ``ts``. By the import's own stamps a
    month of old sessions all read "today" and sorted to the top of the list."""
    return newest_ts(map(source_ts, rows)) if agent else newest_ts(stamps)
