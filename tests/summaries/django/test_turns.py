"""The turn loop's state on the Slot row, and the one automatic dispatch site: a turn that
ends cleanly summarizes the session after the commit and tells the panel once."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import transaction

from summaries import turns
from summaries.core.sidecar import INTENTS, ONE_LINE, read_strict
from summaries.models import IntentSummary, OneLineSummary
from summaries.services import PassOutcome, summary_generate
from summaries.turns import (
    TurnRunning,
    slot_append_revision,
    slot_append_row,
    slot_turn_end,
    slot_turn_start,
)
from tests.fixtures.slots import exchange
from transcripts.core.errors import SessionNotFound
from transcripts.models import Slot
from transcripts.services import session_create


def slot_row(name: str = "s1") -> Slot:
    return Slot.objects.select_related("session").get(name=name)


def run_turn(slot: Slot, i: int, *, stop_reason: str = "end_turn") -> Slot:
    """One turn the way an agent runner drives it: start, reply, end."""
    question, answer = exchange(i)
    slot_turn_start(slot=slot, content=question)
    slot_append_row(slot=slot, role="assistant", content=answer)
    return slot_turn_end(slot=slot, stop_reason=stop_reason)


def summary_dispatches(callbacks: list[Callable[[], object]]) -> list[Callable[[], object]]:
    """The commit callbacks that dispatch a summary pass (turn/row frames are others)."""
    return [cb for cb in callbacks if getattr(cb, "func", None) is turns._dispatch_summary]


# --- turn state -------------------------------------------------------------------------------------


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
        real = getattr(turns, name)

        def spy(*args, _real=real, **kwargs):
            seen.append(Slot.objects.get(pk=slot.pk).dirty)
            return _real(*args, **kwargs)

        monkeypatch.setattr(turns, name, spy)

    slot_turn_start(slot=slot, content="hello")
    appended = slot_append_row(slot=slot, role="assistant", content="working on it")
    slot_append_revision(slot=slot, target_ts=appended.ts[0], patch={"content": "done"})

    assert seen == [True, True, True]
    assert slot_row().dirty is False
    rows = store.read_session(slot.session.key).rows
    assert [r["content"] for r in rows] == ["hello", "done"]


@pytest.mark.django_db
def test_a_pass_never_runs_while_a_turn_is_running(enabled_summaries, make_slot, backend):
    """An empty stop reason means both "idle after restart" and "streaming": running is
    read directly, and holds under force."""
    slot = make_slot(turns=2)
    slot_turn_start(slot=slot, content="more please")

    assert summary_generate(slot_name="s1") == PassOutcome(False, "running")
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(False, "running")
    assert backend.calls == 0


# --- the automatic dispatch ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_clean_turn_end_dispatches_exactly_one_pass_on_commit(
    enabled_summaries, make_slot, django_capture_on_commit_callbacks, monkeypatch
):
    slot = make_slot(turns=1)
    dispatched: list[str] = []
    monkeypatch.setattr("summaries.tasks.summarize_slot.delay", dispatched.append)
    slot_turn_start(slot=slot, content=exchange(1)[0])

    with django_capture_on_commit_callbacks() as callbacks:
        slot_turn_end(slot=slot, stop_reason="end_turn")
        assert dispatched == []  # nothing before the commit

    assert len(summary_dispatches(callbacks)) == 1
    for callback in callbacks:
        callback()
    assert dispatched == ["s1"]


@pytest.mark.django_db
def test_a_clean_turn_stores_a_heuristic_summary_and_its_mirrors(
    enabled_summaries, store, pushes, django_capture_on_commit_callbacks
):
    slot = session_create(name="s1", app=None)
    with django_capture_on_commit_callbacks(execute=True):
        run_turn(slot, 0)
    assert not store.sidecar_path(slot.session.key, INTENTS).exists()  # too few turns yet
    assert pushes.slots == []

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run_turn(slot, 1)

    assert len(summary_dispatches(callbacks)) == 1
    data = read_strict(store, slot.session.key)
    assert data is not None
    assert data["model"] == "heuristic"
    assert data["user_turns"] == 2
    assert data["intents"]
    assert all(i["title"] for i in data["intents"])
    assert read_strict(store, slot.session.key, ONE_LINE) is not None
    mirror = IntentSummary.objects.get(session__key=slot.session.key)
    assert (mirror.sig, mirror.gen, mirror.model) == (data["sig"], data["gen"], "heuristic")
    assert mirror.payload["intents"] == data["intents"]
    assert OneLineSummary.objects.get(session__key=slot.session.key).summary
    assert slot_row().summary_turn_mark == 2
    assert pushes.slots == ["s1"]  # the SLOT name, once


@pytest.mark.django_db(transaction=True)
def test_the_pass_and_its_push_wait_for_the_commit(enabled_summaries, make_slot, store, pushes):
    slot = make_slot(turns=1)
    question, answer = exchange(1)

    with transaction.atomic():
        slot_turn_start(slot=slot, content=question)
        slot_append_row(slot=slot, role="assistant", content=answer)
        slot_turn_end(slot=slot, stop_reason="end_turn")
        assert not store.sidecar_path(slot.session.key, INTENTS).exists()
        assert pushes.slots == []

    assert read_strict(store, slot.session.key) is not None
    assert pushes.slots == ["s1"]


@pytest.mark.django_db
def test_no_push_when_nothing_was_stored(
    enabled_summaries, make_slot, backend, pushes, django_capture_on_commit_callbacks
):
    slot = make_slot(turns=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert summary_generate(slot_name="s1") == PassOutcome(True, "stored")
    assert pushes.slots == ["s1"]

    with django_capture_on_commit_callbacks(execute=True):
        assert summary_generate(slot_name="s1", force=True) == PassOutcome(True, "current")
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="cancelled")
        assert not summary_generate(slot_name="s1").ok
        backend.raises = RuntimeError("model exploded")
        slot_turn_start(slot=slot, content="next")
        slot_turn_end(slot=slot, stop_reason="end_turn")

    assert pushes.slots == ["s1"]


@pytest.mark.django_db
def test_a_failing_push_sender_never_fails_the_pass(
    enabled_summaries, make_slot, backend, pushes, django_capture_on_commit_callbacks
):
    from summaries.push import register_sender, unregister_sender

    def broken(slot_name: str) -> None:
        raise ConnectionError("channel layer down")

    register_sender(broken)
    try:
        make_slot(turns=2)
        with django_capture_on_commit_callbacks(execute=True):
            assert summary_generate(slot_name="s1") == PassOutcome(True, "stored")
    finally:
        unregister_sender(broken)
    assert pushes.slots == ["s1"]


@pytest.mark.parametrize("stop_reason", ["cancelled", "tool_stall", "max_tokens"])
@pytest.mark.django_db
def test_an_unclean_turn_end_dispatches_but_stores_nothing(
    enabled_summaries,
    make_slot,
    store,
    backend,
    pushes,
    caplog,
    django_capture_on_commit_callbacks,
    stop_reason,
):
    slot = make_slot(turns=2, stop_reason="")
    slot_turn_start(slot=slot, content=exchange(2)[0])

    with (
        caplog.at_level("INFO", logger="summaries.services"),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        slot_turn_end(slot=slot, stop_reason=stop_reason)

    assert len(summary_dispatches(callbacks)) == 1
    assert backend.calls == 0
    assert not store.sidecar_path(slot.session.key, INTENTS).exists()
    assert pushes.slots == []
    assert any(
        r.name == "summaries.services"
        and "s1" in r.getMessage()
        and f"stop_reason:{stop_reason}" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.django_db
def test_a_disabled_feature_dispatches_nothing(
    configure, make_slot, backend, django_capture_on_commit_callbacks
):
    configure(enabled=False)
    slot = make_slot(turns=2)
    slot_turn_start(slot=slot, content=exchange(2)[0])

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        slot_turn_end(slot=slot, stop_reason="end_turn")

    assert summary_dispatches(callbacks) == []
    assert backend.calls == 0


@pytest.mark.django_db
def test_a_failing_pass_never_fails_the_turn(
    enabled_summaries, make_slot, backend, django_capture_on_commit_callbacks
):
    slot = make_slot(turns=2)
    backend.raises = RuntimeError("model exploded")
    slot_turn_start(slot=slot, content=exchange(2)[0])

    with django_capture_on_commit_callbacks(execute=True):
        ended = slot_turn_end(slot=slot, stop_reason="end_turn")

    assert backend.calls == 1
    assert (ended.running, ended.last_stop_reason) == (False, "end_turn")
    assert slot_row().summary_in_flight_until is None


@pytest.mark.parametrize("where", ["broker", "pass"])
@pytest.mark.django_db
def test_a_dispatch_that_blows_up_never_fails_the_turn_end(
    enabled_summaries,
    make_slot,
    backend,
    monkeypatch,
    caplog,
    django_capture_on_commit_callbacks,
    where,
):
    """A broker that is down (``delay`` raises) or a database error before the pass's own
    containment (eager tasks run inside the commit callback) must not surface as a failed
    turn end, nor stop the other after-commit work (the turn frame) from running."""
    from django.db import OperationalError

    from summaries.push import register_frame_sender, unregister_frame_sender

    def boom(*args: object, **kwargs: object) -> None:
        raise OperationalError("database is locked" if where == "pass" else "broker down")

    if where == "broker":
        monkeypatch.setattr("summaries.tasks.summarize_slot.delay", boom)
    else:
        monkeypatch.setattr("summaries.services.marker_take", boom)
    frames: list[str] = []

    def frame_sender(slot_name: str, frame: dict[str, object]) -> None:
        frames.append(str(frame.get("type")))

    register_frame_sender(frame_sender)
    slot = make_slot(turns=2)
    slot_turn_start(slot=slot, content=exchange(2)[0])
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            ended = slot_turn_end(slot=slot, stop_reason="end_turn")
    finally:
        unregister_frame_sender(frame_sender)

    assert len(summary_dispatches(callbacks)) == 1
    assert (ended.running, ended.last_stop_reason) == (False, "end_turn")
    assert "turn" in frames
    assert backend.calls == 0
    assert any(
        r.levelname == "WARNING" and "s1" in r.getMessage() and "dispatch" in r.getMessage()
        for r in caplog.records
    )
