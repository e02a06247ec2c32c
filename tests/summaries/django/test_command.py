"""The thin edges over the pass: ``manage.py summarize SLOT`` and the Celery task."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from summaries.core.sidecar import read_strict
from summaries.models import IntentSummary
from summaries.state import summary_turn_mark_set
from summaries.tasks import summarize_slot
from tests.summaries.django.conftest import must
from transcripts.models import Slot

pytestmark = pytest.mark.django_db


def summarize(*args: str) -> tuple[int, str, str]:
    """Run the command; (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    try:
        call_command("summarize", *args, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


# --- summarize SLOT --------------------------------------------------------------------------------


def test_the_command_stores_then_reports_current(enabled_summaries, make_slot, store, backend):
    slot = make_slot(turns=2)

    code, out, err = summarize("s1")
    assert (code, err) == (0, "")
    assert "s1" in out
    assert "stored" in out
    assert read_strict(store, slot.session.key) is not None

    code, out, err = summarize("s1")
    assert (code, err) == (0, "")
    assert "current" in out
    assert backend.calls == 1


def test_the_command_is_forced(enabled_summaries, make_slot, backend):
    """One session on explicit request: an unclean stop or the cadence does not refuse."""
    make_slot(turns=2, stop_reason="cancelled")
    assert summarize("s1")[0] == 0
    assert backend.calls == 1


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("unknown", "slot_not_found"),
        ("one_turn", "too_few_turns"),
        ("incognito", "memory_mode"),
        ("disabled", "disabled"),
        ("running", "running"),
    ],
)
def test_the_command_exits_1_with_the_reason(
    configure, make_slot, backend, settings, setup, reason
):
    configure(enabled=setup != "disabled")
    make_slot(
        "s1",
        turns=1 if setup == "one_turn" else 2,
        memory_mode="incognito" * (setup == "incognito"),
    )
    if setup == "running":
        Slot.objects.filter(name="s1").update(running=True)

    code, out, err = summarize("nope" if setup == "unknown" else "s1")

    assert code == 1
    assert out == ""
    assert reason in err
    assert backend.calls == 0


def test_a_failing_model_exits_1_without_a_traceback(enabled_summaries, make_slot, backend):
    from summaries.core.backends import BackendTimeout

    make_slot(turns=2)
    backend.raises = BackendTimeout("model server did not answer")

    code, _out, err = summarize("s1")

    assert code == 1
    assert "backend_error:BackendTimeout" in err
    assert "Traceback" not in err


def test_the_command_uses_the_heuristic_model_by_default(enabled_summaries, make_slot, store):
    slot = make_slot(turns=2)
    assert summarize("s1")[0] == 0
    assert must(read_strict(store, slot.session.key))["model"] == "heuristic"
    assert IntentSummary.objects.get().model == "heuristic"


# --- the Celery task ----------------------------------------------------------------------------


def test_the_task_returns_the_outcome_reason(enabled_summaries, make_slot, backend):
    make_slot(turns=2)

    assert summarize_slot.apply(args=("s1",)).get() == "stored"
    assert summarize_slot.apply(args=("missing",)).get() == "slot_not_found"
    assert summarize_slot.apply(args=("s1",), kwargs={"force": True}).get() == "current"
    assert backend.calls == 1


def test_a_repeated_delivery_never_pays_twice(enabled_summaries, make_slot, backend):
    """acks_late redelivers a task whose worker died; the repeat must be free."""
    make_slot(turns=2)

    assert summarize_slot.apply(args=("s1",)).get() == "stored"
    # Delivered again after it completed: the cadence gate (turn mark) answers first.
    assert summarize_slot.apply(args=("s1",)).get() == "cadence"
    # The worker died after the sidecar write, before the turn mark: the cache answers.
    summary_turn_mark_set(Slot.objects.get(name="s1").pk, 0)
    assert summarize_slot.apply(args=("s1",)).get() == "current"
    assert backend.calls == 1


def test_the_task_is_late_acknowledged(settings):
    assert summarize_slot.acks_late is True
    assert summarize_slot.name == "summaries.summarize_slot"
