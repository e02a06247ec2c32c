"""The in-flight marker: one summary pass per slot at a time (``SummaryState.in_flight_until``).

Taken atomically (the state row is created if missing, then a conditional UPDATE) before
any I/O, released only by the pass that took it (the token is the expiry it wrote), and
expiring, so a worker killed mid-pass cannot hold it forever. The dirty lease a pass also
respects is turn-loop state: ``transcripts.services.dirty`` (read as ``Slot.dirty``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from transcripts.models import Slot

from .models import SummaryState
from .state import summary_in_flight_until, summary_state_ensure


def marker_ttl() -> timedelta:
    return timedelta(seconds=settings.KIROCREW_SUMMARY_IN_FLIGHT_TTL)


def marker_take(slot_id: int) -> datetime | None:
    """The marker's token (its expiry) when this caller took it, else None (held by
    another pass, or the slot is gone)."""
    summary_state_ensure(slot_id)
    now = timezone.now()
    until = now + marker_ttl()
    taken = (
        SummaryState.objects.filter(slot_id=slot_id)
        .filter(Q(in_flight_until__isnull=True) | Q(in_flight_until__lt=now))
        .update(in_flight_until=until)
    )
    return until if taken == 1 else None


def marker_release(slot_id: int, token: datetime) -> None:
    SummaryState.objects.filter(slot_id=slot_id, in_flight_until=token).update(in_flight_until=None)


def marker_active(slot: Slot) -> bool:
    until = summary_in_flight_until(slot)
    return until is not None and until > timezone.now()
