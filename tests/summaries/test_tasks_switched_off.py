"""Summaries switched off: a turn end queues nothing, and a pass queued before the switch
ends at the gate's first rule, unspent, clearing its "generating" flag."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest
from django.utils import timezone

from summaries import tasks
from summaries.core.config import SessionSummaryConfig
from summaries.core.gate import PassOutcome, PassResult, SlotView, should_summarize, switched_off
from summaries.state import summary_in_flight_until
from summaries.worker import summary_worker_pending
from tests.fixtures.summary_state import in_flight_set
from transcripts.models import Slot

ON = SessionSummaryConfig(enabled=True)
OFF = SessionSummaryConfig(enabled=False)


def test_switched_off_is_the_gates_first_rule() -> None:
    assert switched_off(OFF) == PassOutcome(PassResult.DISABLED)
    assert switched_off(ON) is None
    busy = SlotView(
        in_flight=True,
        memory_mode="incognito",
        running=True,
        last_stop_reason="",
        summary_turn_mark=0,
    )
    assert should_summarize(OFF, busy, None) == switched_off(OFF)  # before every other reason


@pytest.mark.django_db
def test_a_pass_queued_before_summaries_were_switched_off_ends_unspent_and_not_generating(
    make_slot: Any, configure: Any, caplog: pytest.LogCaptureFixture
) -> None:
    slot = make_slot(turns=2)
    in_flight_set(slot.pk, timezone.now() + dt.timedelta(minutes=5))  # queued while on
    configure(enabled=False)
    with caplog.at_level(logging.DEBUG, logger="summaries.tasks"):
        assert tasks.summary_run("s1") == "disabled"
    assert summary_in_flight_until(Slot.objects.get(pk=slot.pk)) is None
    # Said, but below INFO: an import's turn ends would each print it.
    [record] = [r for r in caplog.records if "skipped for s1" in r.getMessage()]
    assert record.getMessage() == "Session summary skipped for s1: disabled"
    assert record.levelno == logging.DEBUG


@pytest.mark.django_db
def test_switched_off_a_turn_end_queues_nothing_and_flags_nothing(
    make_slot: Any, configure: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    slot = make_slot(turns=2)
    configure(enabled=False)
    settings.KIROCREW_SUMMARY_DISPATCH = "process"
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        tasks.summary_dispatch("s1")
    assert len(callbacks) == 1  # the dispatch ran, after the commit
    assert summary_worker_pending() == 0
    assert summary_in_flight_until(Slot.objects.get(pk=slot.pk)) is None
