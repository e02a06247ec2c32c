"""The turn loop's state on the Slot row (moved from tests/summaries/django/test_turns.py
with ``transcripts/services/turn_loop.py``), and what it announces: every write is heard
through ``transcripts.signals`` after its commit, never before, and never from a write
that rolled back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from transcripts import signals
from transcripts.core.errors import SessionNotFound
from transcripts.models import Slot
from transcripts.services import (
    TurnRunning,
    session_create,
    session_delete,
    session_rewind,
    session_rotate,
    slot_append_revision,
    slot_append_row,
    slot_turn_end,
    slot_turn_start,
    turn_loop,
)

SIGNALS = (
    "rows_appended",
    "revision_appended",
    "turn_started",
    "turn_ended",
    "session_deleted",
    "session_rewritten",
)


def slot_row(name: str = "s1") -> Slot:
    return Slot.objects.select_related("session").get(name=name)


@pytest.fixture
def heard() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """(signal name, its arguments) for every transcripts signal sent, in order."""
    log: list[tuple[str, dict[str, Any]]] = []
    receivers = []
    for name in SIGNALS:

        def receiver(sender: Any, _name: str = name, **kwargs: Any) -> None:
            kwargs.pop("signal", None)
            log.append((_name, kwargs))

        getattr(signals, name).connect(receiver, weak=False)
        receivers.append((name, receiver))
    try:
        yield log
    finally:
        for name, receiver in receivers:
            getattr(signals, name).disconnect(receiver)


# --- turn state ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_turn_start_sets_running_and_clears_the_last_stop_reason(store):
    slot = session_create(name="s1", app=None)
    Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")

    appended = slot_turn_start(slot=slot, content="please fix the login test")

    row = slot_row()
    assert (row.running, row.last_stop_reason, row.dirty) == (True, "", False)
    [user_row] = store.read_file(slot.session.key).rows
    assert (user_row["role"], user_row["content"], user_row["ts"]) == (
        "user",
        "please fix the login test",
        appended.ts[0],
    )
    assert row.session.user_turns == 1


@pytest.mark.django_db
def test_a_second_turn_start_raises_and_writes_nothing(store):
    slot = session_create(name="s1", app=None)
    slot_turn_start(slot=slot, content="first")
    before = store.path(slot.session.key).read_bytes()

    with pytest.raises(TurnRunning):
        slot_turn_start(slot=slot, content="second")

    assert store.path(slot.session.key).read_bytes() == before
    assert slot_row().running is True


@pytest.mark.django_db
def test_a_turn_start_that_cannot_write_leaves_the_slot_idle(store):
    slot = session_create(name="s1", app=None)
    store.path(slot.session.key).unlink()  # the transcript vanished behind the mirror

    with pytest.raises(SessionNotFound):
        slot_turn_start(slot=slot, content="hello")

    row = slot_row()
    assert (row.running, row.dirty) == (False, False)


@pytest.mark.django_db
def test_turn_end_records_the_stop_reason_and_idles_the_slot(store):
    slot = session_create(name="s1", app=None)
    slot_turn_start(slot=slot, content="hello")

    returned = slot_turn_end(slot=slot, stop_reason="max_tokens")

    assert (returned.running, returned.last_stop_reason) == (False, "max_tokens")
    row = slot_row()
    assert (row.running, row.last_stop_reason) == (False, "max_tokens")


@pytest.mark.django_db
def test_turn_writes_mark_the_slot_dirty_only_while_they_write(store, monkeypatch):
    slot = session_create(name="s1", app=None)
    seen: list[bool] = []
    for name in ("session_append_row", "session_append_revision"):
        real = getattr(turn_loop, name)

        def spy(*args, _real=real, **kwargs):
            seen.append(Slot.objects.get(pk=slot.pk).dirty)
            return _real(*args, **kwargs)

        monkeypatch.setattr(turn_loop, name, spy)

    slot_turn_start(slot=slot, content="hello")
    appended = slot_append_row(slot=slot, role="assistant", content="working on it")
    slot_append_revision(slot=slot, target_ts=appended.ts[0], patch={"content": "done"})

    assert seen == [True, True, True]
    assert slot_row().dirty is False
    rows = store.read_session(slot.session.key).rows
    assert [r["content"] for r in rows] == ["hello", "done"]


@pytest.mark.django_db
def test_a_rewind_is_refused_while_a_turn_runs(store):
    """The rule lives in the service (the API maps ``TurnRunning`` to 409 turn_running)."""
    slot = session_create(name="s1", app=None)
    first = slot_turn_start(slot=slot, content="hello").ts[0]
    slot_append_row(slot=slot, role="assistant", content="working on it")
    before = store.path(slot.session.key).read_bytes()

    with pytest.raises(TurnRunning):
        session_rewind(key=slot.session.key, after_ts=first)

    assert store.path(slot.session.key).read_bytes() == before
    slot_turn_end(slot=slot, stop_reason="end_turn")
    assert session_rewind(key=slot.session.key, after_ts=first) == 1


# --- announcements ------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_turn_is_announced_after_each_commit(store, heard, django_capture_on_commit_callbacks):
    slot = session_create(name="s1", app=None)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        user = slot_turn_start(slot=slot, content="hello").ts[0]
        reply = slot_append_row(slot=slot, role="assistant", content="draft").ts[0]
        revision = slot_append_revision(slot=slot, target_ts=reply, patch={"content": "done"})
        slot_turn_end(slot=slot, stop_reason="end_turn")
    assert heard == []  # nothing before the commit

    for callback in callbacks:
        callback()

    assert heard == [
        ("turn_started", {"slot_name": "s1"}),
        ("rows_appended", {"slot_name": "s1", "ts": [user], "roles": ["user"]}),
        ("rows_appended", {"slot_name": "s1", "ts": [reply], "roles": ["assistant"]}),
        ("revision_appended", {"slot_name": "s1", "ts": revision.ts[0], "target_ts": reply}),
        ("turn_ended", {"slot_name": "s1", "stop_reason": "end_turn"}),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_turn_end_is_never_announced(store, heard):
    slot = session_create(name="s1", app=None)
    slot_turn_start(slot=slot, content="hello")
    heard.clear()

    def failing_request() -> None:
        with transaction.atomic():
            slot_turn_end(slot=slot, stop_reason="end_turn")
            raise RuntimeError("the request failed after the turn end")

    with pytest.raises(RuntimeError):
        failing_request()

    assert heard == []
    assert slot_row().running is True


@pytest.mark.django_db
def test_a_failing_receiver_never_fails_the_turn_nor_silences_the_others(
    store, django_capture_on_commit_callbacks
):
    after: list[str] = []

    def broken(sender: Any, **kwargs: Any) -> None:
        raise ConnectionError("channel layer down")

    def later(sender: Any, *, slot_name: str, **kwargs: Any) -> None:
        after.append(slot_name)

    signals.turn_ended.connect(broken)  # connected first: it runs before the other one
    signals.turn_ended.connect(later)
    try:
        slot = session_create(name="s1", app=None)
        slot_turn_start(slot=slot, content="hello")
        with django_capture_on_commit_callbacks(execute=True):
            ended = slot_turn_end(slot=slot, stop_reason="end_turn")
    finally:
        signals.turn_ended.disconnect(broken)
        signals.turn_ended.disconnect(later)

    assert (ended.running, ended.last_stop_reason) == (False, "end_turn")
    assert after == ["s1"]


@pytest.mark.django_db
def test_rotation_and_delete_are_announced(store, heard, django_capture_on_commit_callbacks):
    slot = session_create(name="s1", app=None)
    key = slot.session.key
    slot_append_row(slot=slot, role="user", content="one")
    slot_append_row(slot=slot, role="assistant", content="two")
    heard.clear()

    with django_capture_on_commit_callbacks(execute=True):
        session_rotate(key=key, force=True)
        session_delete(key=key)

    rewritten = [kw for name, kw in heard if name == "session_rewritten"]
    assert [kw["reason"] for kw in rewritten] == ["rotate"]
    assert heard[-1] == ("session_deleted", {"session_key": key, "slot_name": "s1"})


@pytest.mark.django_db
def test_a_rewind_announces_the_rewrite(store, heard, django_capture_on_commit_callbacks):
    slot = session_create(name="s1", app=None)
    first = slot_append_row(slot=slot, role="user", content="one").ts[0]
    slot_append_row(slot=slot, role="assistant", content="two")
    heard.clear()

    with django_capture_on_commit_callbacks(execute=True):
        session_rewind(key=slot.session.key, after_ts=first)

    assert heard == [
        (
            "session_rewritten",
            {"session_key": slot.session.key, "slot_name": "s1", "reason": "rewind"},
        )
    ]
