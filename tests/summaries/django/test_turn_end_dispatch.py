"""Summaries' receiver of ``transcripts.signals.turn_ended``, the one automatic dispatch
site: a turn that ends cleanly summarizes the session after the commit and tells the panel
once; an unclean one is refused by the gate, with its reason. (The turn loop's own state:
tests/transcripts/django/test_turn_loop.py.)"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import transaction

from summaries.core.sidecar import INTENTS, ONE_LINE, read_strict, sidecar_path
from summaries.models import IntentSummary, OneLineSummary
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_in_flight_until, summary_turn_mark
from tests.fixtures.slots import exchange
from transcripts.models import Slot
from transcripts.services import (
    session_create,
    slot_append_row,
    slot_turn_end,
    slot_turn_start,
)
from transcripts.signals import turn_ended


def slot_row(name: str = "s1") -> Slot:
    return Slot.objects.select_related("session").get(name=name)


def run_turn(slot: Slot, i: int, *, stop_reason: str = "end_turn") -> Slot:
    """One turn the way an agent runner drives it: start, reply, end."""
    question, answer = exchange(i)
    slot_turn_start(slot=slot, content=question)
    slot_append_row(slot=slot, role="assistant", content=answer)
    return slot_turn_end(slot=slot, stop_reason=stop_reason)


@pytest.fixture
def dispatched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The slots whose pass the ``turn_ended`` receiver dispatched (it still runs)."""
    from summaries.tasks import summary_dispatch

    seen: list[str] = []

    def spy(slot_name: str) -> None:
        seen.append(slot_name)
        summary_dispatch(slot_name)

    monkeypatch.setattr("summaries.receivers.summary_dispatch", spy)
    return seen


@pytest.mark.django_db
def test_a_pass_never_runs_while_a_turn_is_running(enabled_summaries, make_slot, backend):
    """An empty stop reason means both "idle after restart" and "streaming": running is
    read directly, and holds under force."""
    slot = make_slot(turns=2)
    slot_turn_start(slot=slot, content="more please")

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.RUNNING)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.RUNNING)
    assert backend.calls == 0


# --- the automatic dispatch ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_clean_turn_end_dispatches_exactly_one_pass_on_commit(
    enabled_summaries,
    make_slot,
    django_capture_on_commit_callbacks,
    monkeypatch,
    dispatched,
    settings,
):
    slot = make_slot(turns=1)
    queued: list[tuple[object, ...]] = []
    settings.KIROCREW_SUMMARY_DISPATCH = "celery"
    settings.KIROCREW_SUMMARY_SETTLE = 2.0

    def apply_async(args: tuple[object, ...], *, countdown: float) -> None:
        queued.append((*args[:2], countdown))

    monkeypatch.setattr("summaries.tasks.summarize_slot.apply_async", apply_async)
    slot_turn_start(slot=slot, content=exchange(1)[0])

    with django_capture_on_commit_callbacks() as callbacks:
        slot_turn_end(slot=slot, stop_reason="end_turn")
        assert (dispatched, queued) == ([], [])  # nothing before the commit

    with django_capture_on_commit_callbacks(execute=True):  # the dispatch's own, after it
        for callback in callbacks:
            callback()
    # Queued to run after the settle (a later turn end within it supersedes it).
    assert (dispatched, queued) == (["s1"], [("s1", False, 2.0)])


@pytest.mark.django_db
def test_a_clean_turn_stores_a_heuristic_summary_and_its_mirrors(
    enabled_summaries, store, pushes, django_capture_on_commit_callbacks, dispatched
):
    slot = session_create(name="s1", app=None)
    with django_capture_on_commit_callbacks(execute=True):
        run_turn(slot, 0)
    assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()  # too few turns yet
    assert pushes.slots == []

    with django_capture_on_commit_callbacks(execute=True):
        run_turn(slot, 1)

    assert dispatched == ["s1", "s1"]  # a pass per turn end; the first was too early
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
    assert summary_turn_mark(slot_row()) == 2
    assert pushes.slots == ["s1"]  # the SLOT name, once


@pytest.mark.django_db(transaction=True)
def test_the_pass_and_its_push_wait_for_the_commit(enabled_summaries, make_slot, store, pushes):
    slot = make_slot(turns=1)
    question, answer = exchange(1)

    with transaction.atomic():
        slot_turn_start(slot=slot, content=question)
        slot_append_row(slot=slot, role="assistant", content=answer)
        slot_turn_end(slot=slot, stop_reason="end_turn")
        assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()
        assert pushes.slots == []

    assert read_strict(store, slot.session.key) is not None
    assert pushes.slots == ["s1"]


@pytest.mark.django_db
def test_no_push_when_nothing_was_stored(
    enabled_summaries, make_slot, backend, pushes, django_capture_on_commit_callbacks
):
    slot = make_slot(turns=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert summary_generate(slot_name="s1") == PassOutcome(PassResult.STORED)
    assert pushes.slots == ["s1"]

    with django_capture_on_commit_callbacks(execute=True):
        assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.CURRENT)
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
    from summaries.signals import summary_stored

    def broken(sender: object, **kwargs: object) -> None:
        raise ConnectionError("channel layer down")

    summary_stored.connect(broken)
    try:
        make_slot(turns=2)
        with django_capture_on_commit_callbacks(execute=True):
            assert summary_generate(slot_name="s1") == PassOutcome(PassResult.STORED)
    finally:
        summary_stored.disconnect(broken)
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
    dispatched,
    stop_reason,
):
    slot = make_slot(turns=2, stop_reason="")
    slot_turn_start(slot=slot, content=exchange(2)[0])

    with (
        caplog.at_level("INFO", logger="summaries.services"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        slot_turn_end(slot=slot, stop_reason=stop_reason)

    assert dispatched == ["s1"]  # the gate refuses it, with its reason
    assert backend.calls == 0
    assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()
    assert pushes.slots == []
    assert any(
        r.name == "summaries.services"
        and "s1" in r.getMessage()
        and f"stop_reason:{stop_reason}" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.django_db
def test_a_disabled_feature_spends_nothing_and_the_pass_says_why(
    configure,
    make_slot,
    backend,
    store,
    pushes,
    django_capture_on_commit_callbacks,
    dispatched,
    caplog,
):
    # The gate is asked once, by the pass (issue 10): the turn end does not pre-check it.
    configure(enabled=False)
    slot = make_slot(turns=2)
    slot_turn_start(slot=slot, content=exchange(2)[0])

    with caplog.at_level(logging.DEBUG), django_capture_on_commit_callbacks(execute=True):
        slot_turn_end(slot=slot, stop_reason="end_turn")

    assert dispatched == [slot.name]
    assert backend.calls == 0
    assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()
    assert pushes.slots == []
    assert any(  # said below INFO: every turn end of a switched-off summarizer gets here
        r.name == "summaries.tasks" and "s1" in r.getMessage() and "disabled" in r.getMessage()
        for r in caplog.records
    )


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
    assert summary_in_flight_until(slot_row()) is None


@pytest.mark.parametrize("where", ["broker", "pass"])
@pytest.mark.django_db
def test_a_dispatch_that_blows_up_never_fails_the_turn_end(
    enabled_summaries,
    make_slot,
    backend,
    monkeypatch,
    caplog,
    django_capture_on_commit_callbacks,
    dispatched,
    where,
    settings,
):
    """A broker that is down (``apply_async`` raises) or a database error before the pass's own
    containment (eager tasks run inside the commit callback) must not surface as a failed
    turn end, nor stop the other after-commit work (the turn frame, a receiver connected
    after summaries' own) from running."""
    from django.db import OperationalError

    def boom(*args: object, **kwargs: object) -> None:
        raise OperationalError("database is locked" if where == "pass" else "broker down")

    if where == "broker":
        settings.KIROCREW_SUMMARY_DISPATCH = "celery"
        monkeypatch.setattr("summaries.tasks.summarize_slot.apply_async", boom)
    else:
        monkeypatch.setattr("summaries.services.claim_take", boom)
    frames: list[str] = []

    def frame_sender(slot_name: str, frame: Any) -> None:
        frames.append(str(frame.wire()["type"]))

    later: list[str] = []

    def later_receiver(sender: object, *, slot_name: str, **kwargs: object) -> None:
        later.append(slot_name)

    monkeypatch.setattr("kirocrew_site.realtime.receivers.frame_send", frame_sender)
    slot = make_slot(turns=2)
    slot_turn_start(slot=slot, content=exchange(2)[0])
    turn_ended.connect(later_receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            ended = slot_turn_end(slot=slot, stop_reason="end_turn")
    finally:
        turn_ended.disconnect(later_receiver)

    assert dispatched == ["s1"]
    assert later == ["s1"]
    assert (ended.running, ended.last_stop_reason) == (False, "end_turn")
    assert "turn" in frames
    assert backend.calls == 0
    assert any(
        r.levelname == "WARNING" and "s1" in r.getMessage() and "dispatch" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.django_db
def test_a_turn_end_pass_gives_way_to_a_later_turn_ends_pass(
    enabled_summaries, make_slot, backend, store
):
    """Whichever worker runs them: the earlier request's pass spends nothing and leaves
    "generating" on; the later one's stores the summary and clears it."""
    from summaries.state import pass_requested
    from summaries.tasks import summarize_slot

    slot = make_slot(turns=2)
    first, later = pass_requested("s1"), pass_requested("s1")
    assert first is not None
    assert later is not None

    assert summarize_slot("s1", False, first.isoformat()) == "superseded"
    assert backend.calls == 0
    assert summary_in_flight_until(slot_row()) is not None
    assert read_strict(store, slot.session.key) is None

    assert summarize_slot("s1", False, later.isoformat()) == "stored"
    assert backend.calls == 1
    assert summary_in_flight_until(slot_row()) is None
    assert read_strict(store, slot.session.key) is not None
