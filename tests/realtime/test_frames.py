"""What a connected socket receives: typed frames for exactly the slots its caller may
see, a ``session_summary`` frame (never a notification) once a summary is stored, a
separate ``notification`` frame for the bell feed, and nothing before the commit."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, transaction

from kirocrew_site.realtime.frames import (
    NotificationFrame,
    RowFrame,
    SessionSummaryFrame,
    TurnFrame,
)
from summaries.models import IntentSummary
from summaries.services import summary_generate
from summaries.signals import summary_stored
from tests.realtime.conftest import (
    Caller,
    frames_until,
    greeted,
    is_notification,
    is_summary,
    validate_frame,
)
from transcripts.models import Slot
from transcripts.services import slot_append_row, slot_turn_end, slot_turn_start

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("layer")]

QUIET = 0.3  # seconds a socket must stay silent to show that nothing was sent
ISO_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$")


def turn_sequence(slot: str) -> list[tuple[str, object]]:
    """The frame types one clean turn produces, in order, with what identifies each."""
    return [
        ("turn", True),  # running
        ("row", "user"),
        ("row", "assistant"),
        ("turn", False),  # ended
        ("session_summary", slot),
        ("notification", "Summary updated"),
    ]


def shape(frame: dict[str, Any]) -> tuple[str, object]:
    data = frame["data"]
    return frame["type"], {
        "turn": lambda: data["running"],
        "row": lambda: data["role"],
        "session_summary": lambda: data["key"],
        "notification": lambda: data["title"],
    }[frame["type"]]()


# --- who receives what ----------------------------------------------------------------------


async def test_a_dashboard_user_receives_frames_for_every_slot(
    dashboard: Caller, alice: Caller, bob: Caller, unscoped: str
):
    mine = await alice.create_slot("alice-1")
    theirs = await bob.create_slot("bob-1")
    async with greeted(dashboard.headers) as comm:
        for caller, slot in ((alice, mine), (bob, theirs), (dashboard, unscoped)):
            await caller.drive_turn(slot)
            frames = await frames_until(comm, is_notification(slot))
            assert [shape(f) for f in frames] == turn_sequence(slot)
            assert {f["data"]["key"] for f in frames} == {slot}
        assert await comm.receive_nothing(timeout=QUIET)


async def test_an_app_receives_frames_only_for_its_own_slots(
    alice: Caller, bob: Caller, dashboard: Caller, unscoped: str
):
    mine = await alice.create_slot("alice-own")
    foreign = await bob.create_slot("bob-foreign")
    async with greeted(alice.headers) as comm:
        await bob.drive_turn(foreign)  # a foreign slot: a turn and a stored summary
        assert await comm.receive_nothing(timeout=QUIET)
        await dashboard.drive_turn(unscoped)  # an unscoped slot: closed to every app
        assert await comm.receive_nothing(timeout=QUIET)
        await bob.add_row(foreign, "PS")
        # A forced, stored pass on the foreign slot.
        status, body = await bob.api("POST", f"/api/chat/slots/{foreign}/summary")
        assert status == 200, body
        # A summary announced for the unscoped slot (its frame and its bell-feed entry).
        await sync_to_async(summary_stored.send)(sender=None, slot_name=unscoped)
        assert await comm.receive_nothing(timeout=QUIET)

        await alice.drive_turn(mine)
        frames = await frames_until(comm, is_notification(mine))
        # The layer is FIFO: had any foreign frame been sent, it would come first.
        assert [shape(f) for f in frames] == turn_sequence(mine)
        assert {f["data"]["key"] for f in frames} == {mine}
        assert await comm.receive_nothing(timeout=QUIET)


async def test_two_apps_each_see_only_their_own_turns(alice: Caller, bob: Caller):
    a_slot = await alice.create_slot("alice-2")
    b_slot = await bob.create_slot("bob-2")
    async with greeted(alice.headers) as a_comm, greeted(bob.headers) as b_comm:
        await bob.drive_turn(b_slot)
        await alice.drive_turn(a_slot)
        a_frames = await frames_until(a_comm, is_notification(a_slot))
        b_frames = await frames_until(b_comm, is_notification(b_slot))
        assert {f["data"]["key"] for f in a_frames} == {a_slot}
        assert {f["data"]["key"] for f in b_frames} == {b_slot}
        assert await a_comm.receive_nothing(timeout=QUIET)
        assert await b_comm.receive_nothing(timeout=QUIET)


# --- frame shapes ---------------------------------------------------------------------------


async def test_every_frame_validates_against_its_pydantic_model(alice: Caller):
    slot = await alice.create_slot("alice-typed")
    async with greeted(alice.headers) as comm:
        await alice.drive_turn(slot)
        status, body = await alice.api("GET", f"/api/chat/slots/{slot}/transcript")
        assert status == 200, body
        user_ts = body["rows"][0]["ts"]
        status, body = await alice.api(
            "POST", f"/api/chat/slots/{slot}/rows/{user_ts}/revisions", {"patch": {"cls": "x"}}
        )
        assert status == 201, body
        revision_ts = body["ts"]
        frames = await frames_until(
            comm, lambda f: f["type"] == "row" and f["data"]["role"] == "revision"
        )

    models = [validate_frame(f) for f in frames]
    assert [type(m) for m in models] == [
        TurnFrame,
        RowFrame,
        RowFrame,
        TurnFrame,
        SessionSummaryFrame,
        NotificationFrame,
        RowFrame,
    ]
    rows = [m for m in models if isinstance(m, RowFrame)]
    assert rows[0].data.ts == user_ts  # the row frame names the ts the API returned
    assert rows[-1].data.ts == revision_ts
    assert models[3].data.stop_reason == "end_turn"


async def test_the_session_summary_frame_is_typed_and_names_the_slot_never_a_notification(
    alice: Caller,
):
    slot = await alice.create_slot("alice-summary")
    async with greeted(alice.headers) as comm:
        await alice.drive_turn(slot)
        frames = await frames_until(comm, is_notification(slot))
        status, body = await alice.api("GET", f"/api/chat/slots/{slot}/summary")

    summaries = [f for f in frames if f["type"] == "session_summary"]
    # Exactly the documented body: the SLOT name (what URLs use), not "dashboard:<slot>".
    assert summaries == [{"type": "session_summary", "data": {"key": slot}}]
    notifications = [f for f in frames if f["type"] == "notification"]
    assert len(notifications) == 1
    note = notifications[0]["data"]
    assert set(note) == {"key", "title", "ts"}
    assert note["key"] == slot
    assert ISO_TS.match(note["ts"]), note["ts"]
    assert "session_summary" not in repr(notifications)  # never a wrapped summary
    # The frame is a hint that the GET now serves a summary.
    assert status == 200
    assert body["intents"], body


async def test_a_forced_post_summary_pushes_a_frame_too(alice: Caller):
    slot = await alice.create_slot("alice-post")
    await alice.drive_turn(slot)
    # A new row makes the stored summary out of date, so the POST stores a new one.
    await alice.add_row(slot, "Also, docs.")
    async with greeted(alice.headers) as comm:
        status, body = await alice.api("POST", f"/api/chat/slots/{slot}/summary")
        assert status == 200, body
        frames = await frames_until(comm, is_summary(slot))
        assert frames == [{"type": "session_summary", "data": {"key": slot}}]


async def test_an_unchanged_transcript_pushes_no_session_summary(alice: Caller):
    slot = await alice.create_slot("alice-cached")
    await alice.drive_turn(slot)
    async with greeted(alice.headers) as comm:
        outcome = await sync_to_async(summary_generate)(slot_name=slot, force=True)
        assert (outcome.ok, outcome.reason) == (True, "current")
        assert await comm.receive_nothing(timeout=QUIET)


# --- after the commit, never before ---------------------------------------------------------


class Rollback(Exception):
    pass


@contextmanager
def rolled_back() -> Iterator[None]:
    """A transaction that always rolls back once its body ran."""
    try:
        with transaction.atomic():
            yield
            raise Rollback
    except Rollback:
        pass


async def test_a_rolled_back_turn_pushes_nothing(alice: Caller):
    slot_name = await alice.create_slot("alice-rollback")

    def turn_in_a_rolled_back_transaction() -> None:
        slot = Slot.objects.select_related("session").get(name=slot_name)
        with rolled_back():
            slot_turn_start(slot=slot, content="Please rename the export button.")
            slot_append_row(slot=slot, role="assistant", content="Renamed it.")
            slot_turn_end(slot=slot, stop_reason="end_turn")

    async with greeted(alice.headers) as comm:
        await sync_to_async(turn_in_a_rolled_back_transaction)()
        assert await comm.receive_nothing(timeout=QUIET)


async def test_a_rolled_back_summary_pushes_nothing(alice: Caller):
    slot_name = await alice.create_slot("alice-rollback-summary")
    await alice.drive_turn(slot_name)
    await alice.add_row(slot_name, "More.")

    def pass_in_a_rolled_back_transaction() -> str:
        mirrored = IntentSummary.objects.get(session__slot__name=slot_name).sig
        with rolled_back():
            outcome = summary_generate(slot_name=slot_name, force=True)
        # The mirror write rolled back with the frame that would have announced it.
        assert IntentSummary.objects.get(session__slot__name=slot_name).sig == mirrored
        return outcome.reason

    async with greeted(alice.headers) as comm:
        assert await sync_to_async(pass_in_a_rolled_back_transaction)() == "stored"
        assert await comm.receive_nothing(timeout=QUIET)


async def test_frames_wait_for_the_commit_then_arrive(alice: Caller):
    """Inside a transaction nothing is sent; the commit releases every frame, in order."""
    slot_name = await alice.create_slot("alice-commit")
    async with greeted(alice.headers) as comm:
        entered, release = threading.Event(), threading.Event()

        def turn_held_open() -> None:
            slot = Slot.objects.select_related("session").get(name=slot_name)
            with transaction.atomic():
                slot_turn_start(slot=slot, content="Please add a dark mode toggle.")
                slot_append_row(slot=slot, role="assistant", content="Added the toggle.")
                slot_turn_end(slot=slot, stop_reason="end_turn")
                entered.set()
                assert release.wait(timeout=10)
            connection.close()  # this thread's own connection

        task = asyncio.ensure_future(sync_to_async(turn_held_open, thread_sensitive=False)())
        await sync_to_async(entered.wait, thread_sensitive=False)(10)
        assert await comm.receive_nothing(timeout=QUIET)  # written, not committed: silence
        release.set()
        await task
        frames = await frames_until(comm, is_notification(slot_name))
        assert [shape(f) for f in frames] == turn_sequence(slot_name)
