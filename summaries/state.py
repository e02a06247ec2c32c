"""Summaries' own state of a slot: the turn mark and the "generating" flag (``SummaryState``),
and the back-off after a bad reply (Django's cache).

Exclusion is the claim's (``core/sidecar.py``), not ``in_flight_until``: the flag is only what
the panel shows. A row is upserted on first need; one racing the slot's delete may outlive
it until ``summary_state_reap``. A slot without a row reads as mark 0, nothing in flight.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import Exists, OuterRef
from django.utils import timezone

from transcripts.models import Slot

from .models import SummaryState


def summary_state_write(slot_id: int, **values: int | datetime) -> None:
    """Upsert these fields of the slot's state row; nothing for a slot that is gone."""
    if not Slot.objects.filter(pk=slot_id).exists():
        return
    SummaryState.objects.bulk_create(
        [SummaryState(slot_id=slot_id, **values)],
        update_conflicts=True,
        unique_fields=["slot"],
        update_fields=list(values),
    )


def summary_state_reap() -> int:
    """Delete state rows whose slot is gone (``SummaryState.slot`` has no database
    constraint); how many went."""
    gone = ~Exists(Slot.objects.filter(pk=OuterRef("slot_id")))
    deleted, _ = SummaryState.objects.filter(gone).delete()
    return deleted


def summary_state_of(slot: Slot) -> SummaryState | None:
    """The state row as last read with the slot (cached until ``refresh_from_db``)."""
    try:
        return slot.summary_state
    except SummaryState.DoesNotExist:
        return None


def summary_turn_mark(slot: Slot) -> int:
    return getattr(summary_state_of(slot), "turn_mark", 0)


def summary_in_flight_until(slot: Slot) -> datetime | None:
    return getattr(summary_state_of(slot), "in_flight_until", None)


def summary_turn_mark_set(slot_id: int, user_turns: int) -> None:
    """Record that the stored summary covers ``user_turns`` (the gate's cadence base)."""
    summary_state_write(slot_id, turn_mark=user_turns)


def summary_turn_mark_clamp(slot_name: str) -> None:
    """After a rewind: a mark above the user turn count (a summary of turns that no longer
    exist) is reset to 0."""
    slot = Slot.objects.filter(name=slot_name).values_list("id", "session__user_turns").first()
    if slot is not None:
        SummaryState.objects.filter(slot_id=slot[0], turn_mark__gt=slot[1]).update(turn_mark=0)


# The "generating" flag: set when a pass is dispatched, cleared by the pass that ran for
# that request; one killed before clearing it leaves it for at most the flag's TTL.
def pass_started() -> datetime:
    """The flag's expiry from now; as a pass's start, the bound ``pass_done`` clears below
    (requests made after this pass started keep their "generating")."""
    return timezone.now() + timedelta(seconds=settings.KIROCREW_SUMMARY_IN_FLIGHT_TTL)


def pass_requested(slot_name: str) -> datetime | None:
    """A pass for the slot was queued: "generating" from now on; this request's stamp (a
    later request's is greater: ``pass_superseded``), None for no slot."""
    slot_id = Slot.objects.filter(name=slot_name).values_list("id", flat=True).first()
    if slot_id is None:
        return None
    until = pass_started()
    summary_state_write(slot_id, in_flight_until=until)
    return until


def pass_superseded(slot_name: str, asked: datetime) -> bool:
    """A request made after the one stamped ``asked`` is still pending: its pass, queued
    later, reads the transcript this one would and more, and clears the flag."""
    return SummaryState.objects.filter(slot__name=slot_name, in_flight_until__gt=asked).exists()


def pass_request_drop(slot_name: str) -> None:
    """The queued pass ended before its claim (switched off): no longer "generating"."""
    SummaryState.objects.filter(slot__name=slot_name).update(in_flight_until=None)


def pass_done(slot_id: int, started: datetime) -> None:
    SummaryState.objects.filter(slot_id=slot_id, in_flight_until__lte=started).update(
        in_flight_until=None
    )


def pass_pending(slot: Slot) -> bool:
    until = summary_in_flight_until(slot)
    return until is not None and until > timezone.now()


# The back-off: after a runaway or unusable reply, a turn end does not pay for another
# (minutes to the token limit on a local server). In the cache (Redis when configured, so
# every worker sees it): advisory, and losing it costs one more attempt.
def _backoff_key(slot_pk: int) -> str:
    return f"kirocrew:summary-backoff:{slot_pk}"


def summary_backoff_start(slot_pk: int) -> None:
    seconds = settings.KIROCREW_SUMMARY_BACKOFF
    if seconds > 0:
        cache.set(_backoff_key(slot_pk), 1, timeout=seconds)


def summary_backoff_active(slot_pk: int) -> bool:
    return cache.get(_backoff_key(slot_pk)) is not None


def summary_backoff_clear(slot_pk: int) -> None:
    cache.delete(_backoff_key(slot_pk))
