"""Whether a pass is queued or running for a slot: what the panel shows, never a lock.

``SummaryState.in_flight_until`` is set when a pass is dispatched (``tasks.py``, after the
commit that asked for it) and cleared by the pass that ran for that request; the GET
answers ``generate_state: "generating"`` while it is set and not expired. It decides
nothing: one pass per slot is the claim's (``core/sidecar.py::claim_take``, an OS lock the kernel drops
when its holder dies), so a pass killed before clearing it blocks no pass and no POST;
it only reads "generating" until the next pass for the slot ends, at most
``KIROCREW_SUMMARY_IN_FLIGHT_TTL`` seconds. The dirty lease a pass also respects is
turn-loop state: ``transcripts.services.dirty`` (read as ``Slot.dirty``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from transcripts.models import Slot

from .models import SummaryState
from .state import summary_in_flight_until, summary_state_write


def pass_requested(slot_name: str) -> datetime | None:
    """A pass for the slot was queued: "generating" from now on (no slot: nothing). The
    stamp it returns is this request's: a later request's is greater (``pass_superseded``)."""
    slot_id = Slot.objects.filter(name=slot_name).values_list("id", flat=True).first()
    if slot_id is None:
        return None
    until = timezone.now() + timedelta(seconds=settings.KIROCREW_SUMMARY_IN_FLIGHT_TTL)
    summary_state_write(slot_id, in_flight_until=until)
    return until


def pass_superseded(slot_name: str, asked: datetime) -> bool:
    """A request made after the one stamped ``asked`` is still pending: its pass, queued
    later, reads the transcript this one would and more, and clears the flag."""
    return SummaryState.objects.filter(slot__name=slot_name, in_flight_until__gt=asked).exists()


def pass_request_drop(slot_name: str) -> None:
    """The queued pass ended before its claim (switched off): no longer "generating"."""
    SummaryState.objects.filter(slot__name=slot_name).update(in_flight_until=None)


def pass_started() -> datetime:
    """The bound ``pass_done`` clears below: requests made after this pass started keep
    their "generating" (their pass is still to come)."""
    return timezone.now() + timedelta(seconds=settings.KIROCREW_SUMMARY_IN_FLIGHT_TTL)


def pass_done(slot_id: int, started: datetime) -> None:
    SummaryState.objects.filter(slot_id=slot_id, in_flight_until__lte=started).update(
        in_flight_until=None
    )


def pass_pending(slot: Slot) -> bool:
    until = summary_in_flight_until(slot)
    return until is not None and until > timezone.now()
