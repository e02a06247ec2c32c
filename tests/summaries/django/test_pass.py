"""The summary pass end to end: what it stores, when it declines (and says why), and that
an unchanged transcript never pays for a second model call."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from summaries.core.sidecar import INTENTS, ONE_LINE, read_for_panel, read_strict, sidecar_path
from summaries.models import IntentSummary, OneLineSummary
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_in_flight_until, summary_turn_mark, summary_turn_mark_set
from tests.fixtures.slots import add_exchanges
from tests.fixtures.summary_state import in_flight_set
from tests.summaries.django.conftest import INTENT, must
from transcripts.models import Slot
from transcripts.services import session_append_row, session_rewind, session_set_title

pytestmark = pytest.mark.django_db

STORED = PassOutcome(PassResult.STORED)
CURRENT = PassOutcome(PassResult.CURRENT)


def slot_row(name: str = "s1") -> Slot:
    return Slot.objects.select_related("session").get(name=name)


# --- what a stored pass leaves behind -----------------------------------------------------------


def test_a_pass_stores_the_sidecar_the_mirrors_and_the_turn_mark(
    enabled_summaries, make_slot, store, backend
):
    slot = make_slot(turns=2)
    key = slot.session.key
    path = store.path(key)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    identity = store.identity(key)
    last_ts = store.read_file(key).rows[-1]["ts"]

    assert summary_generate(slot_name="s1") == STORED

    assert backend.calls == 1
    assert "Please fix bug number 1 in the login flow" in backend.prompts[0]
    data = read_strict(store, key)
    assert data is not None
    assert (data["sig"], data["gen"]) == (identity.sig, identity.gen)
    assert [i["title"] for i in data["intents"]] == [INTENT["title"]]
    assert data["intents"][0]["state"] == "done"
    assert data["constraints"] == ["Run tests with -p no:cache"]
    assert data["user_turns"] == 2
    assert data["last_activity"] == last_ts
    assert data["model"] == "recording"
    assert isinstance(data["duration_ms"], int)
    assert data["duration_ms"] >= 0
    assert abs(data["generated_at"] - timezone.now().timestamp()) < 60
    gist = read_strict(store, key, ONE_LINE)
    assert gist is not None
    assert INTENT["title"] in gist["summary"]
    # The transcript the summary describes is exactly as it was.
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before

    mirror = IntentSummary.objects.get(session__key=key)
    assert mirror.payload == {"intents": data["intents"], "constraints": data["constraints"]}
    assert (mirror.sig, mirror.gen, mirror.user_turns) == (identity.sig, identity.gen, 2)
    assert (mirror.model, mirror.intent_count, mirror.states) == ("recording", 1, "done")
    assert mirror.last_activity == last_ts
    assert mirror.generated_at == dt.datetime.fromtimestamp(data["generated_at"], tz=dt.UTC)
    one_line = OneLineSummary.objects.get(session__key=key)
    assert (one_line.summary, one_line.sig, one_line.gen) == (gist["summary"], identity.sig, 0)
    assert summary_turn_mark(slot_row()) == 2
    assert summary_in_flight_until(slot_row()) is None


def test_a_secret_in_the_reply_never_reaches_the_sidecar_or_the_mirror(
    enabled_summaries, make_slot, store, backend
):
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    leaky = {**INTENT, "progress": [f"Deployed with key {secret}"]}
    backend.reply = json.dumps({"intents": [leaky], "constraints": [f"export KEY={secret}"]})
    slot = make_slot(turns=2)

    assert summary_generate(slot_name="s1") == STORED

    assert secret not in sidecar_path(store.root, slot.session.key, INTENTS).read_text()
    assert secret not in json.dumps(IntentSummary.objects.get().payload)


def test_the_turn_count_excludes_automation_posting_as_user(
    enabled_summaries, make_slot, store, backend
):
    slot = make_slot(turns=1)
    session_append_row(key=slot.session.key, role="user", content="[cron notification] nightly")

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.TOO_FEW_TURNS)
    assert backend.calls == 0


def test_an_unknown_slot_is_refused(enabled_summaries, backend):
    assert summary_generate(slot_name="nope") == PassOutcome(PassResult.SLOT_NOT_FOUND)
    assert backend.calls == 0


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


def _in_flight(slot, configure):
    until = timezone.now() + dt.timedelta(minutes=5)
    in_flight_set(slot.pk, until)


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

    outcome = summary_generate(slot_name="s1", force=force)

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


# --- caching --------------------------------------------------------------------------------------


def test_an_unchanged_transcript_makes_the_next_pass_free(
    enabled_summaries, make_slot, store, backend, pushes
):
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    sidecar = sidecar_path(store.root, slot.session.key, INTENTS)
    body = sidecar.read_bytes()

    assert summary_generate(slot_name="s1", force=True) == CURRENT
    assert summary_generate(slot_name="s1", force=True) == CURRENT  # a second click is free

    assert backend.calls == 1
    assert sidecar.read_bytes() == body
    assert pushes.slots == []  # nothing new to tell the panel (no commit callbacks ran either)


def test_a_lost_turn_mark_still_never_pays_twice(enabled_summaries, make_slot, backend):
    """After a restart (the mark is gone), the cache check stops a second call."""
    make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    summary_turn_mark_set(Slot.objects.get(name="s1").pk, 0)

    assert summary_generate(slot_name="s1") == CURRENT
    assert backend.calls == 1
    assert summary_turn_mark(slot_row()) == 2


def test_a_title_edit_keeps_the_summary_current(enabled_summaries, make_slot, store, backend):
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED

    session_set_title(key=slot.session.key, title="Login bugs")

    assert summary_generate(slot_name="s1", force=True) == CURRENT
    assert backend.calls == 1
    assert read_for_panel(store, slot.session.key)[1] is False


def test_an_append_makes_the_next_pass_pay_again(enabled_summaries, make_slot, store, backend):
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    add_exchanges(slot, 1, start=2)
    assert read_for_panel(store, slot.session.key)[1] is True

    assert summary_generate(slot_name="s1") == STORED
    assert backend.calls == 2
    data = read_strict(store, slot.session.key)
    assert data is not None
    assert data["user_turns"] == 3


def test_a_rewind_makes_the_next_pass_pay_again(enabled_summaries, make_slot, store, backend):
    slot = make_slot(turns=3)
    key = slot.session.key
    assert summary_generate(slot_name="s1") == STORED
    rows = store.read_file(key).rows
    session_rewind(key=key, after_ts=rows[3]["ts"])  # keep two exchanges
    assert store.identity(key).gen == 1

    assert summary_generate(slot_name="s1", force=True) == STORED
    assert backend.calls == 2
    data = read_strict(store, key)
    assert data is not None
    assert (data["gen"], data["user_turns"]) == (1, 2)
    assert IntentSummary.objects.get().gen == 1


def test_the_pass_reads_the_whole_session_including_rotated_archives(
    enabled_summaries, make_slot, store, backend
):
    """A rotation drops old rows from the file; they still belong to the session."""
    slot = make_slot(turns=3)
    key = slot.session.key
    store.keep_lines, keep = 2, store.keep_lines
    try:
        store.rotate(key, force=True)
    finally:
        store.keep_lines = keep
    assert len(store.read_file(key).rows) == 2

    assert summary_generate(slot_name="s1") == STORED
    assert "Please fix bug number 0 in the login flow" in backend.prompts[0]
    assert must(read_strict(store, key))["user_turns"] == 3


def test_a_current_pass_heals_a_missing_mirror(
    enabled_summaries, make_slot, store, backend, pushes, django_capture_on_commit_callbacks
):
    """The worker died after the sidecar write and before its mirror commit (or the
    database was rebuilt from disk): the sidecar is current, so the repeat costs nothing,
    and it restores what the session list reads, and the push nobody received."""
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    expected = IntentSummary.objects.values().get()
    expected_gist = OneLineSummary.objects.values().get()
    IntentSummary.objects.all().delete()
    OneLineSummary.objects.all().delete()
    summary_turn_mark_set(slot.pk, 0)

    with django_capture_on_commit_callbacks(execute=True):
        assert summary_generate(slot_name="s1", force=True) == CURRENT

    assert backend.calls == 1
    healed = IntentSummary.objects.values().get()
    assert {k: v for k, v in healed.items() if k != "id"} == {
        k: v for k, v in expected.items() if k != "id"
    }
    gist = OneLineSummary.objects.values().get()
    assert {k: v for k, v in gist.items() if k != "id"} == {
        k: v for k, v in expected_gist.items() if k != "id"
    }
    assert summary_turn_mark(slot_row()) == 2
    assert pushes.slots == ["s1"]

    with django_capture_on_commit_callbacks(execute=True):
        assert summary_generate(slot_name="s1", force=True) == CURRENT
    assert pushes.slots == ["s1"]  # an intact mirror: nothing to tell anyone
