"""The summary pass end to end: what a stored pass leaves behind, and that an unchanged
transcript never pays for a second model call while any change makes it pay again."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from summaries.core.intents import SummaryChecks
from summaries.core.sidecar import INTENTS, ONE_LINE, read_for_panel, read_strict, sidecar_path
from summaries.models import IntentSummary, OneLineSummary
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_in_flight_until, summary_turn_mark, summary_turn_mark_set
from tests.fixtures.slots import add_exchanges
from tests.summaries.django.conftest import CONSTRAINT, INTENT, must
from tests.summaries.django.pass_helpers import CURRENT, STORED, slot_row
from transcripts.models import Slot
from transcripts.services import session_append_row, session_rewind, session_set_title

pytestmark = pytest.mark.django_db


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
    assert data["constraints"] == [CONSTRAINT]
    assert data["checks"] == SummaryChecks().model_dump()  # the reply held up
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
    assert mirror.payload == {
        "intents": data["intents"],
        "constraints": data["constraints"],
        "checks": data["checks"],
    }
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
