"""The two expiring marks on a ``Slot`` row that summary passes respect.

The in-flight marker: one summary pass per slot at a time. Taken atomically (a
conditional UPDATE) before any I/O, released only by the pass that took it (the token is
the expiry it wrote), and expiring, so a worker killed mid-pass cannot hold it forever.

The dirty lease: a write for the slot is between "accepted" and "on disk and mirrored".
Set around every slot write, released by the writer that set it (same token rule), and
expiring, so a writer killed mid-write cannot leave the slot dirty forever.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from transcripts.models import Slot


def marker_ttl() -> timedelta:
    return timedelta(seconds=settings.KIROCREW_SUMMARY_IN_FLIGHT_TTL)


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


def dirty_ttl() -> timedelta:
    return timedelta(seconds=settings.KIROCREW_SLOT_DIRTY_TTL)


def dirty_take(slot_id: int) -> datetime:
    """Mark the slot dirty until the returned token (the lease's expiry).

    Unconditional: writers overlap. The newest lease wins and only its writer clears it.
    When it ends before an older overlapping writer the mark clears early, as the flag it
    replaces did: a pass may then publish a summary the older write makes stale a moment
    later, which the sidecar's sig shows and the next pass replaces.
    """
    until = timezone.now() + dirty_ttl()
    Slot.objects.filter(pk=slot_id).update(dirty_until=until)
    return until


def dirty_release(slot_id: int, token: datetime) -> None:
    Slot.objects.filter(pk=slot_id, dirty_until=token).update(dirty_until=None)
