"""Summaries' own state of a slot (``SummaryState``): the turn mark and the in-flight marker.

One row per slot, created on first need by ``summary_state_ensure``: an ``INSERT …
SELECT`` from the slot row with ``ON CONFLICT DO NOTHING``, so concurrent passes create
it once and a slot already deleted gets none. One racing the delete itself may outlive
its slot: ``summary_state_reap`` removes it when the deletion is announced.
A slot without a row reads as mark 0 with no pass in flight.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connections, router
from django.db.models import Exists, OuterRef

from transcripts.models import Slot

from .models import SummaryState


def summary_state_ensure(slot_id: int) -> None:
    alias = router.db_for_write(SummaryState)
    qn = connections[alias].ops.quote_name
    state = SummaryState._meta
    mark = state.get_field("turn_mark").column
    pk = state.get_field("slot").column
    # Identifiers from the models' own meta, quoted; the id is a bound parameter.
    sql = (
        f"INSERT INTO {qn(state.db_table)} ({qn(pk)}, {qn(mark)}) "  # noqa: S608
        f"SELECT {qn('id')}, 0 FROM {qn(Slot._meta.db_table)} WHERE {qn('id')} = %s "
        f"ON CONFLICT DO NOTHING"
    )
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, [slot_id])


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
    summary_state_ensure(slot_id)
    SummaryState.objects.filter(slot_id=slot_id).update(turn_mark=user_turns)


def summary_turn_mark_clamp(slot_name: str) -> None:
    """After a rewind: a mark above the session's user turn count belongs to a summary of
    turns that no longer exist, so it is reset (0: nothing valid stored, no cadence)."""
    slot = Slot.objects.filter(name=slot_name).values_list("id", "session__user_turns").first()
    if slot is not None:
        SummaryState.objects.filter(slot_id=slot[0], turn_mark__gt=slot[1]).update(turn_mark=0)
