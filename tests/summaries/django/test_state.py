"""Summaries' own state of a slot (``SummaryState``): created on first need, never for a
slot that is gone, and gone with its slot."""

from __future__ import annotations

import pytest

from summaries.models import SummaryState
from summaries.state import (
    pass_done,
    pass_pending,
    pass_requested,
    pass_started,
    summary_state_of,
    summary_turn_mark,
    summary_turn_mark_set,
)
from transcripts.models import Slot
from transcripts.services import session_create, session_delete


@pytest.mark.django_db
def test_a_slot_without_a_row_reads_as_mark_zero_and_no_pass_in_flight(store):
    slot = session_create(name="s1", app=None)
    assert summary_state_of(slot) is None
    assert (summary_turn_mark(slot), pass_pending(slot)) == (0, False)

    pass_requested("s1")  # the first dispatch creates the row: "generating"
    slot.refresh_from_db()
    assert pass_pending(slot)
    started = pass_started()  # its pass
    pass_done(slot.pk, started)
    summary_turn_mark_set(slot.pk, 4)
    slot.refresh_from_db()
    assert (summary_turn_mark(slot), pass_pending(slot)) == (4, False)
    assert SummaryState.objects.count() == 1


@pytest.mark.django_db
def test_a_deleted_slot_gets_no_state(store):
    slot = session_create(name="s1", app=None)
    session_delete(key=slot.session.key)

    pass_requested("s1")
    summary_turn_mark_set(slot.pk, 3)
    assert not SummaryState.objects.exists()


@pytest.mark.django_db
def test_the_state_goes_with_its_slot_and_a_late_row_is_reaped(
    store, django_capture_on_commit_callbacks
):
    kept = session_create(name="kept", app=None)
    gone = session_create(name="gone", app=None)
    for slot in (kept, gone):
        summary_turn_mark_set(slot.pk, 2)
    # What a pass racing a delete leaves: a row for a slot id that no longer exists.
    SummaryState.objects.create(slot_id=Slot.objects.order_by("-pk")[0].pk + 100)

    with django_capture_on_commit_callbacks(execute=True):
        session_delete(key=gone.session.key)

    assert list(SummaryState.objects.values_list("slot_id", flat=True)) == [kept.pk]


@pytest.mark.django_db
def test_a_pass_request_keeps_the_turn_mark_and_a_mark_keeps_the_request(store):
    # Each write sets its own field: the cadence base survives a queued pass, and a
    # stored summary's mark does not clear "generating" for a pass still to come.
    slot = session_create(name="s1", app=None)
    summary_turn_mark_set(slot.pk, 5)
    pass_requested("s1")
    summary_turn_mark_set(slot.pk, 6)
    slot.refresh_from_db()
    assert (summary_turn_mark(slot), pass_pending(slot)) == (6, True)
    assert SummaryState.objects.count() == 1
