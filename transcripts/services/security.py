"""The audit trail of denials and probes, aggregated so that a flood cannot grow it.

One ``SecurityEvent`` row per event fields and ``WINDOW``, a repeat counted on it; past
``MAX_ROWS_PER_WINDOW`` rows a caller's events count on one overflow row per (operation,
outcome, source, error). Every call runs the same statements in the same order whatever
the event says: a foreign slot and a missing one must cost the same (CWE-208).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from ..core.storage import storage_fault
from ..models import SecurityEvent

log = logging.getLogger(__name__)

WINDOW = timedelta(minutes=10)
MAX_ROWS_PER_WINDOW = 100  # distinct rows per caller and window, overflow rows aside
OVERFLOW_RESOURCE = "(over the per-window limit)"
_FIELDS = ("caller", "operation", "outcome", "source", "resource", "error")


def _now() -> datetime:
    return timezone.now()  # a seam for tests that cross a window boundary


def _clip(value: str, field: str) -> str:
    limit = getattr(SecurityEvent._meta.get_field(field), "max_length", None) or 200
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _window_start(now: datetime) -> datetime:
    step = int(WINDOW.total_seconds())
    return datetime.fromtimestamp(int(now.timestamp()) // step * step, tz=now.tzinfo)


def _fingerprint(fields: dict[str, str], window: datetime) -> str:
    key = json.dumps([sorted(fields.items()), window.isoformat()], ensure_ascii=True)
    return hashlib.sha256(key.encode()).hexdigest()


def _bump(fingerprint: str, now: datetime) -> bool:
    updated = SecurityEvent.objects.filter(fingerprint=fingerprint).update(
        count=F("count") + 1, last_seen_at=now
    )
    return updated > 0


def _insert(fields: dict[str, str], window: datetime, now: datetime) -> None:
    fingerprint = _fingerprint(fields, window)
    try:
        with transaction.atomic():  # a savepoint: a lost race must not spoil the caller's
            SecurityEvent.objects.create(
                **fields,
                created_at=now,
                last_seen_at=now,
                window_start=window,
                fingerprint=fingerprint,
            )
    except IntegrityError:  # a concurrent request inserted the same key first
        _bump(fingerprint, now)
        return
    log.warning("security event: " + _EVENT, *_event(fields))  # once per row: bounded too


def security_event_record(
    *,
    caller: str,
    operation: str,
    outcome: str = "denied",
    source: str = "",
    resource: str = "",
    error: str = "",
) -> None:
    """Count one security-relevant outcome; ``caller`` names, never authenticates. The
    per-window cap is checked without a lock: concurrent writers may pass it by their number."""
    values = (caller, operation, outcome, source, resource, error)
    fields = {name: _clip(value, name) for name, value in zip(_FIELDS, values, strict=True)}
    try:
        _record(fields)
    except DatabaseError as exc:
        if storage_fault(exc) is None or transaction.get_connection().in_atomic_block:
            raise
        # A full or read-only database must not turn the denial it records into a 5xx
        # (a read-only home still answers reads): the event goes to the log alone.
        log.warning(
            "security event not stored (%s): " + _EVENT, type(exc).__name__, *_event(fields)
        )


_EVENT = "%s %s by %r on %r (%s)"


def _event(fields: dict[str, str]) -> list[str]:
    return [fields[name] for name in ("operation", "outcome", "caller", "resource", "error")]


def _record(fields: dict[str, str]) -> None:
    now = _now()
    window = _window_start(now)
    if _bump(_fingerprint(fields, window), now):
        return
    rows = SecurityEvent.objects.filter(caller=fields["caller"], window_start=window).count()
    if rows >= MAX_ROWS_PER_WINDOW:
        fields["resource"] = OVERFLOW_RESOURCE
        if _bump(_fingerprint(fields, window), now):
            return
    _insert(fields, window, now)
