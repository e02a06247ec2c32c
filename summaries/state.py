"""Summaries' own state of a slot (``SummaryState``): the turn mark and the in-flight marker.

One row per slot, created on first need by ``summary_state_write``: one upsert
(``bulk_create(update_conflicts=…)``, ``INSERT … ON CONFLICT DO UPDATE`` on both SQLite
and PostgreSQL) of the fields it sets, so concurrent passes create it once, and only
while the slot exists, so a slot already deleted gets none. One racing the delete itself
may outlive its slot: ``summary_state_reap`` removes it when the deletion is announced.
A slot without a row reads as mark 0 with no pass in flight.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Exists, OuterRef

from transcripts.models import Slot

from .models import SummaryState


def summary_state_write(
    slot_id: int, *, turn_mark: int | None = None, in_flight_until: datetime | None = None
) -> None:
    """Set the given fields (``None``: left as they are) on the slot's state row, creating
    it with the other fields' defaults; nothing for a slot that is gone."""
    values: dict[str, object] = {}
    if turn_mark is not None:
        values["turn_mark"] = turn_mark
    if in_flight_until is not None:
        values["in_flight_until"] = in_flight_until
    if not values or not Slot.objects.filter(pk=slot_id).exists():
        return
    SummaryState.objects.bulk_create(
        [SummaryState(slot_id=slot_id, **values)],
        update_conflicts=True,
        unique_fields=["slot"],
        update_fields=list(values),
    )


def summary_state_reap() -> int:
    """Delete state rows whose slot is gone (a pass created one while its slot was being
    deleted: no foreign key stops it, see ``SummaryState.slot``); how many went."""
    gone = ~Exists(Slot.objects.filter(pk=OuterRef("slot_id")))
    deleted, _ = SummaryState.objects.filter(gone).delete()
    return deleted


def summary_state_of(slot: Slot) -> SummaryState | None:
    """The slot's state row as last read with it (``slot.summary_state``, cached on the
    instance until ``refresh_from_db``), None when it has none."""
    try:
        return slot.summary_state
    except SummaryState.DoesNotExist:
        return None


def summary_turn_mark(slot: Slot) -> int:
    state = summary_state_of(slot)
    return state.turn_mark if state is not None else 0


def summary_in_flight_until(slot: Slot) -> datetime | None:
    state = summary_state_of(slot)
    return state.in_flight_until if state is not None else None


def summary_turn_mark_set(slot_id: int, user_turns: int) -> None:
    """Record that the stored summary covers ``user_turns`` (the gate's cadence base)."""
    summary_state_write(slot_id, turn_mark=user_turns)


def summary_turn_mark_clamp(slot_name: str) -> None:
    """After a rewind: a mark above the session's user turn count belongs to a summary of
    turns that no longer exist, so it is reset (0: nothing valid stored, no cadence)."""
    slot = Slot.objects.filter(name=slot_name).values_list("id", "session__user_turns").first()
    if slot is not None:
        SummaryState.objects.filter(slot_id=slot[0], turn_mark__gt=slot[1]).update(turn_mark=0)
