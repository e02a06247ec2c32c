"""Transcript ``ts`` values: offset-aware ISO 8601 strings, strictly increasing per file.

The original system stamps rows with ``datetime.now().astimezone().isoformat()`` and
moves a stamp forward by one microsecond when the clock has not advanced past the
previous row (a stalled or backwards clock, a DST fold). Legacy rows may be naive;
they are read as local time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

ONE_MICROSECOND = timedelta(microseconds=1)


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
    """Whether ``current`` is later than ``previous``; None when either cannot be parsed.

    Same-length stamps with the same UTC offset compare as strings, which avoids a
    datetime parse per row on the fold's hot path.
    """
    if len(current) == len(previous) >= 6 and current[-6:] == previous[-6:] and current[-6] in "+-":
        return current > previous
    a, b = parse_ts(current), parse_ts(previous)
    if a is None or b is None:
        return None
    return a > b
