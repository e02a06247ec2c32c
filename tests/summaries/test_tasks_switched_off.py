"""A queued pass with summaries switched off ends at the gate's first rule, before any
database or file work (an import of 500 sessions queues 500 of them); switched on, it
is the whole pass (``summary_generate``), which asks the gate in its fixed order."""

from __future__ import annotations

import logging

import pytest

from summaries import tasks
from summaries.core.config import SessionSummaryConfig
from summaries.core.gate import PassOutcome, PassResult, SlotView, should_summarize, switched_off

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


@pytest.mark.parametrize(("cfg", "passes"), [(OFF, 0), (ON, 1)])
def test_the_queued_pass_asks_the_config_first(
    cfg: SessionSummaryConfig,
    passes: int,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []
    monkeypatch.setattr(tasks, "summary_config", lambda: cfg)
    monkeypatch.setattr(tasks, "summary_generate", lambda *, slot_name: ran.append(slot_name))
    with caplog.at_level(logging.DEBUG, logger="summaries.tasks"):
        tasks._run_pass("s1")  # no database here: switched off, nothing reaches it
    assert ran == ["s1"] * passes
    if not passes:  # said, but below INFO: an import's turn ends would each print it
        [record] = [r for r in caplog.records if "skipped for s1" in r.getMessage()]
        assert record.getMessage() == "Session summary skipped for s1: disabled"
        assert record.levelno == logging.DEBUG
