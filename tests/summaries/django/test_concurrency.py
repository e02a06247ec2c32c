"""Races around the model call: whatever lands while the "model" thinks (a delete, an
append, a rewrite, a new turn) must never be papered over by the summary it returns; and
two passes for one slot spend exactly one model call."""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable
from typing import TypeVar

import pytest
from django.db import connection
from django.utils import timezone

from summaries.core.sidecar import (
    INTENTS,
    ONE_LINE,
    Claim,
    claim_take,
    read_for_panel,
    read_strict,
    sidecar_path,
)
from summaries.models import IntentSummary, OneLineSummary
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import pass_done, pass_started, summary_in_flight_until
from tests.fixtures.slots import add_exchanges
from tests.fixtures.summary_snapshot import SummarySnapshot
from tests.fixtures.summary_state import in_flight_set
from tests.summaries.django.conftest import OTHER_REPLY
from transcripts.core import store as store_module
from transcripts.core.fsutil import write_all as real_write_all
from transcripts.models import Slot
from transcripts.services import (
    session_delete,
    session_rewind,
    session_rotate,
    slot_append_row,
    slot_turn_start,
)
from transcripts.services.dirty import dirty_take

STORED = PassOutcome(PassResult.STORED)
T = TypeVar("T")


def slot_row(name: str = "s1") -> Slot:
    return Slot.objects.select_related("session").get(name=name)


@pytest.fixture
def summarized(enabled_summaries, make_slot, store, backend):
    """A slot with a stored summary, one more exchange since, and the next reply differing."""
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    previous = SummarySnapshot(store, slot.session.key)
    add_exchanges(slot, 1, start=2)
    backend.reply = OTHER_REPLY
    return slot, previous


# --- the write guard, end to end ------------------------------------------------------------------


@pytest.mark.django_db
def test_a_delete_during_generation_is_not_resurrected(summarized, store, backend, pushes):
    slot, _ = summarized
    key = slot.session.key
    backend.during = lambda: session_delete(key=key)

    outcome = summary_generate(slot_name="s1", force=True)

    assert outcome == PassOutcome(PassResult.NO_TRANSCRIPT)
    assert backend.calls == 2
    assert not store.path(key).exists()
    assert not sidecar_path(store.root, key, INTENTS).exists()
    assert not sidecar_path(store.root, key, ONE_LINE).exists()
    assert not IntentSummary.objects.exists()
    assert not OneLineSummary.objects.exists()
    assert pushes.slots == []


@pytest.mark.django_db
def test_a_delete_between_the_snapshot_and_the_read_is_a_quiet_refusal(
    summarized, store, backend, monkeypatch, caplog
):
    slot, _ = summarized
    key = slot.session.key
    # The delete lands just before the pass reads the session.
    real_read = type(store).read_session

    def delete_then_read(self, key, **kwargs):
        if self.exists(key):
            session_delete(key=key)
        return real_read(self, key, **kwargs)

    monkeypatch.setattr(type(store), "read_session", delete_then_read)

    with caplog.at_level("INFO", logger="summaries.services"):
        outcome = summary_generate(slot_name="s1", force=True)

    assert outcome == PassOutcome(PassResult.NO_TRANSCRIPT)
    assert backend.calls == 1  # only the pass before
    assert not sidecar_path(store.root, key, INTENTS).exists()
    assert not any(r.levelname == "WARNING" for r in caplog.records)  # a race, not a fault


@pytest.mark.django_db
def test_an_append_during_generation_refuses_the_write(summarized, store, backend):
    slot, previous = summarized
    backend.during = lambda: slot_append_row(slot=slot, role="assistant", content="late row")

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.WRITE_REFUSED)

    assert previous.unchanged()
    assert read_strict(store, slot.session.key) is None  # stale, and says so
    assert read_for_panel(store, slot.session.key)[1] is True
    assert summary_in_flight_until(slot_row()) is None


def _rewind(slot: Slot, store) -> None:
    rows = store.read_file(slot.session.key).rows
    session_rewind(key=slot.session.key, after_ts=rows[3]["ts"])


def _rotate(slot: Slot, store) -> None:
    session_rotate(key=slot.session.key, force=True)


@pytest.mark.parametrize("rewrite", [_rewind, _rotate], ids=["rewind", "rotate"])
@pytest.mark.django_db
def test_a_rewrite_during_generation_cannot_bless_a_stale_summary(
    summarized, store, backend, rewrite
):
    """The rewrite restores the mtime and advances gen: only the snapshot gen catches it."""
    slot, previous = summarized
    key = slot.session.key
    before = store.identity(key)
    backend.during = lambda: rewrite(slot, store)

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.WRITE_REFUSED)

    after = store.identity(key)
    assert (after.sig, after.gen) == (before.sig, before.gen + 1)
    assert previous.unchanged()
    assert read_strict(store, key) is None


@pytest.mark.django_db
def test_a_turn_starting_during_the_model_call_discards_the_result(summarized, store, backend):
    slot, previous = summarized
    backend.during = lambda: slot_turn_start(slot=slot, content="and one more thing")

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.DISCARDED_RUNNING)

    assert previous.unchanged()
    assert slot_row().running is True
    assert summary_in_flight_until(slot_row()) is None


@pytest.mark.django_db
def test_a_write_in_flight_during_the_model_call_discards_the_result(summarized, backend):
    """A write accepted but not yet on disk (dirty) is invisible to the disk guard."""
    slot, previous = summarized
    backend.during = lambda: dirty_take(slot.pk)

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.DISCARDED_DIRTY)
    assert previous.unchanged()


@pytest.mark.django_db
def test_a_row_appended_after_the_read_is_not_missed(summarized, store, backend, monkeypatch):
    """The snapshot precedes the read, so a row landing right after the read refuses the
    write instead of blessing a summary that does not contain it."""
    _slot, previous = summarized
    real_read = type(store).read_session

    def read_then_append(self, key, **kwargs):
        view = real_read(self, key, **kwargs)
        self.append_row(key, "assistant", "landed just after the read")
        return view

    monkeypatch.setattr(type(store), "read_session", read_then_append)

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.WRITE_REFUSED)
    assert previous.unchanged()


@pytest.mark.django_db
def test_an_append_inside_one_clock_tick_still_refuses_the_write(
    summarized, store, backend, monkeypatch
):
    """A coarse kernel clock leaves the mtime where it was across the append; the store's
    strict sig must move it anyway, or the summary missing that row would be stored."""
    slot, previous = summarized

    def pinned_write_all(fd: int, data: bytes) -> None:
        st = os.fstat(fd)
        real_write_all(fd, data)
        os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))

    def append_in_the_same_tick() -> None:
        monkeypatch.setattr(store_module, "write_all", pinned_write_all)
        before = store.identity(slot.session.key).sig
        slot_append_row(slot=slot, role="assistant", content="same tick")
        assert store.identity(slot.session.key).sig == before + 1

    backend.during = append_in_the_same_tick

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.WRITE_REFUSED)
    assert previous.unchanged()


# --- one model call per slot ------------------------------------------------------------------------


def _in_thread(target: Callable[[], PassOutcome], results: list[PassOutcome]) -> threading.Thread:
    def run() -> None:
        try:
            results.append(target())
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def claimed(store, name: str = "s1") -> bool:
    """Whether a pass holds the session's claim (a probe: taken and let go at once)."""
    probe = claim_take(store.root, slot_row(name).session.key)
    if probe is None:
        return True
    probe.release()
    return False


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_passes_spend_one_model_call(enabled_summaries, make_slot, store, backend):
    make_slot(turns=2)
    backend.gate = threading.Event()
    results: list[PassOutcome] = []

    first = _in_thread(lambda: summary_generate(slot_name="s1"), results)
    assert backend.entered.wait(10)  # the first pass is inside the model call
    assert claimed(store)

    second = _in_thread(lambda: summary_generate(slot_name="s1", force=True), results)
    second.join(10)
    assert results == [PassOutcome(PassResult.IN_FLIGHT)]
    assert claimed(store)  # the refused caller left the holder's claim alone

    backend.gate.set()
    first.join(10)
    assert not first.is_alive()
    assert not second.is_alive()
    assert results[1] == STORED
    assert backend.calls == 1
    assert not claimed(store)
    assert summary_in_flight_until(slot_row()) is None


@pytest.mark.django_db(transaction=True)
def test_a_turn_end_refused_while_another_pass_ran_is_summarized_after_it(
    enabled_summaries, make_slot, store, backend
):
    """The running pass read the session before the turn ended; the pass that turn end
    asked for was refused (in_flight). The holder runs one more when it is done."""
    slot = make_slot(turns=2)
    backend.gate = threading.Event()
    results: list[PassOutcome] = []
    first = _in_thread(lambda: summary_generate(slot_name="s1"), results)
    assert backend.entered.wait(10)  # the first pass read two turns, waits on the model

    add_exchanges(slot, 1, start=2)
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.IN_FLIGHT)

    backend.gate.set()
    first.join(20)
    assert not first.is_alive()
    data = read_strict(store, slot.session.key)
    assert data is not None
    assert data["user_turns"] == 3  # the third turn is in the summary
    assert backend.calls == 2
    assert not claimed(store)
    assert summary_in_flight_until(slot_row()) is None


@pytest.mark.django_db(transaction=True)
def test_passes_released_together_spend_one_model_call(
    enabled_summaries, make_slot, backend, monkeypatch
):
    """Every caller passes the cheap gate before any takes the claim; the lock admits
    exactly one."""
    make_slot(turns=2)
    contenders = 4
    before_take, after_take = threading.Barrier(contenders), threading.Barrier(contenders)

    def take_together(root, key) -> Claim | None:
        before_take.wait(10)  # everyone has read the slot
        claim = claim_take(root, key)
        after_take.wait(10)  # nobody lets go while another still takes
        return claim

    monkeypatch.setattr("summaries.services.claim_take", take_together)
    results: list[PassOutcome] = []
    threads = [
        _in_thread(lambda: summary_generate(slot_name="s1", force=True), results)
        for _ in range(contenders)
    ]
    for thread in threads:
        thread.join(20)

    assert backend.calls == 1
    assert sorted(results, key=lambda o: o.reason) == [
        PassOutcome(PassResult.IN_FLIGHT),
        PassOutcome(PassResult.IN_FLIGHT),
        PassOutcome(PassResult.IN_FLIGHT),
        STORED,
    ]


@pytest.mark.django_db
def test_a_generating_flag_left_by_a_dead_pass_blocks_nothing(
    enabled_summaries, make_slot, backend
):
    """A pass killed before it cleared "generating" (the flag its request set) does not
    refuse the next pass, automatic or forced; that pass clears it."""
    slot = make_slot(turns=2)
    in_flight_set(slot.pk, timezone.now() + dt.timedelta(minutes=5))

    assert summary_generate(slot_name="s1") == STORED
    assert backend.calls == 1
    assert summary_in_flight_until(slot_row()) is None


@pytest.mark.django_db
def test_a_held_claim_refuses_even_a_forced_pass_and_keeps_the_holders_flag(
    enabled_summaries, make_slot, store, backend, caplog
):
    slot = make_slot(turns=2)
    held = timezone.now() + dt.timedelta(minutes=5)
    in_flight_set(slot.pk, held)
    claim = claim_take(store.root, slot.session.key)
    assert claim is not None
    try:
        with caplog.at_level("INFO", logger="summaries.services"):
            outcome = summary_generate(slot_name="s1", force=True)
    finally:
        claim.release()
    assert outcome == PassOutcome(PassResult.IN_FLIGHT)
    assert backend.calls == 0
    assert summary_in_flight_until(slot_row()) == held  # the holder clears it when done
    assert any("s1" in r.getMessage() and "in_flight" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db
def test_a_pass_clears_only_the_requests_made_before_it_started(make_slot, settings):
    slot = make_slot(turns=0)
    started = pass_started()
    later = started + dt.timedelta(seconds=1)  # a turn end queued the next pass meanwhile
    in_flight_set(slot.pk, later)
    pass_done(slot.pk, started)
    assert summary_in_flight_until(slot_row()) == later  # still "generating"
    in_flight_set(slot.pk, started - dt.timedelta(seconds=1))
    pass_done(slot.pk, started)
    assert summary_in_flight_until(slot_row()) is None
