"""The summary pass declines (and says why): disabled, too few turns, unclean stops,
cadence, incognito and temporary slots, and exactly what ``force`` lifts."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from summaries.core.sidecar import INTENTS, Claim, claim_take, sidecar_path
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_in_flight_until, summary_turn_mark, summary_turn_mark_set
from tests.fixtures.slots import add_exchanges
from tests.fixtures.summary_state import in_flight_set
from tests.summaries.django.pass_helpers import STORED, slot_row
from transcripts.models import Slot
from transcripts.runtime import get_store

pytestmark = pytest.mark.django_db


# --- gating ---------------------------------------------------------------------------------------


def test_disabled_costs_nothing(configure, make_slot, store, backend):
    slot = make_slot(turns=3)  # no config.json at all: off by default

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.DISABLED)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.DISABLED)

    configure(enabled=False)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.DISABLED)
    assert backend.calls == 0
    assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()
    assert summary_in_flight_until(slot_row()) is None


def test_the_environment_switch_enables_without_a_config_file(
    make_slot, store, backend, monkeypatch
):
    make_slot(turns=2)
    monkeypatch.setenv("KIROCREW_SUMMARY_ENABLED", "1")
    assert summary_generate(slot_name="s1") == STORED


def test_the_environment_switch_overrides_the_file(configure, make_slot, backend, monkeypatch):
    configure(enabled=True)
    make_slot(turns=2)
    monkeypatch.setenv("KIROCREW_SUMMARY_ENABLED", "0")
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.DISABLED)
    assert backend.calls == 0


@pytest.mark.parametrize(
    ("stop_reason", "reason"),
    [
        ("cancelled", "cancelled"),
        ("max_tokens", "max_tokens"),
        ("timeout", "timeout"),
        ("", "missing"),
    ],
)
def test_only_a_clean_end_turn_qualifies(
    enabled_summaries, make_slot, backend, stop_reason, reason
):
    make_slot(turns=3, stop_reason=stop_reason)

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.STOP_REASON, reason)
    assert backend.calls == 0


def test_too_few_turns(enabled_summaries, make_slot, backend):
    make_slot(turns=1)

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.TOO_FEW_TURNS)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.TOO_FEW_TURNS)
    assert backend.calls == 0


def test_min_user_turns_comes_from_the_config(configure, make_slot, backend):
    configure(enabled=True, min_user_turns=3)
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.TOO_FEW_TURNS)
    add_exchanges(slot, 1, start=2)
    assert summary_generate(slot_name="s1") == STORED


def test_cadence_after_a_stored_pass(configure, make_slot, backend):
    configure(enabled=True, regenerate_after_turns=2)
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.CADENCE)
    add_exchanges(slot, 1, start=2)
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.CADENCE)
    assert backend.calls == 1

    add_exchanges(slot, 1, start=3)
    assert summary_generate(slot_name="s1") == STORED
    assert backend.calls == 2
    assert summary_turn_mark(slot_row()) == 4


@pytest.mark.parametrize("mode", ["incognito", "temporary", "Incognito", "TEMPORARY"])
def test_incognito_and_temporary_slots_are_never_summarized(
    enabled_summaries, make_slot, store, backend, mode
):
    slot = make_slot(turns=3, memory_mode=mode)

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.MEMORY_MODE)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.MEMORY_MODE)
    assert backend.calls == 0
    assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()


@pytest.mark.parametrize("force", [False, True])
def test_an_incognito_line_zero_wins_over_the_mirror(
    enabled_summaries, make_slot, store, backend, force
):
    """Only the transcript says incognito (the mirror is behind): still no summary."""
    slot = make_slot(turns=3)
    assert store.update_metadata(slot.session.key, {"memory_mode": "incognito"})
    assert slot_row().session.memory_mode == ""

    assert summary_generate(slot_name="s1", force=force) == PassOutcome(PassResult.MEMORY_MODE)
    assert backend.calls == 0
    assert not sidecar_path(store.root, slot.session.key, INTENTS).exists()
    assert summary_in_flight_until(slot_row()) is None


def _disabled(slot, configure):
    configure(enabled=False)


_claims: list[Claim] = []  # held until the test's pass has been refused


def _in_flight(slot, configure):
    """Another pass holds the session's claim (and its request's "generating" flag)."""
    in_flight_set(slot.pk, timezone.now() + dt.timedelta(minutes=5))
    claim = claim_take(get_store().root, slot.session.key)
    assert claim is not None
    _claims.append(claim)


def _memory_mode(slot, configure):
    from transcripts.services import session_update_metadata

    session_update_metadata(key=slot.session.key, updates={"memory_mode": "temporary"})


def _running(slot, configure):
    Slot.objects.filter(pk=slot.pk).update(running=True)


def _unclean_stop(slot, configure):
    Slot.objects.filter(pk=slot.pk).update(last_stop_reason="tool_stall")


def _few_turns(slot, configure):
    configure(enabled=True, min_user_turns=5)


def _cadence(slot, configure):
    configure(enabled=True, regenerate_after_turns=5)
    summary_turn_mark_set(slot.pk, 1)


@pytest.mark.parametrize("force", [False, True], ids=["auto", "forced"])
@pytest.mark.parametrize(
    ("condition", "reason", "lifted_by_force"),
    [
        (_disabled, PassOutcome(PassResult.DISABLED), False),
        (_in_flight, PassOutcome(PassResult.IN_FLIGHT), False),
        (_memory_mode, PassOutcome(PassResult.MEMORY_MODE), False),
        (_running, PassOutcome(PassResult.RUNNING), False),
        (_unclean_stop, PassOutcome(PassResult.STOP_REASON, "tool_stall"), True),
        (_few_turns, PassOutcome(PassResult.TOO_FEW_TURNS), False),
        (_cadence, PassOutcome(PassResult.CADENCE), True),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_force_lifts_exactly_stop_reason_and_cadence(
    configure, make_slot, backend, condition, reason, lifted_by_force, force
):
    configure(enabled=True)
    slot = make_slot(turns=2)
    condition(slot, configure)

    try:
        outcome = summary_generate(slot_name="s1", force=force)
    finally:
        while _claims:
            _claims.pop().release()

    if force and lifted_by_force:
        assert outcome == STORED
        assert backend.calls == 1
    else:
        assert outcome == reason
        assert backend.calls == 0


def test_a_declined_pass_is_logged_with_its_reason(enabled_summaries, make_slot, backend, caplog):
    make_slot(turns=1)
    with caplog.at_level("INFO", logger="summaries.services"):
        summary_generate(slot_name="s1")
    assert any("s1" in r.getMessage() and "too_few_turns" in r.getMessage() for r in caplog.records)
