"""The cross-process in-flight marker: one summary pass per slot at a time.

Taken atomically (a conditional UPDATE) before any I/O, released only by the pass that
took it (the token is the expiry it wrote), and expiring, so a worker killed mid-pass
cannot hold it forever.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from transcripts.models import Slot


def marker_ttl() -> timedelta:
    return timedelta(seconds=getattr(settings, "KIROCREW_SUMMARY_IN_FLIGHT_TTL", 600))


def marker_take(slot_id: int) -> datetime | None:
    """The marker's token (its expiry) when this caller took it, else None."""
    now = timezone.now()
    until = now + marker_ttl()
    taken = (
        Slot.objects.filter(pk=slot_id)
        .filter(Q(summary_in_flight_until__isnull=True) | Q(summary_in_flight_until__lt=now))
        .update(summary_in_flight_until=until)
    )
    return until if taken == 1 else None


def marker_release(slot_id: int, token: datetime) -> None:
    Slot.objects.filter(pk=slot_id, summary_in_flight_until=token).update(
        summary_in_flight_until=None
    )


def marker_active(slot: Slot) -> bool:
    until = slot.summary_in_flight_until
    return until is not None and until > timezone.now()
