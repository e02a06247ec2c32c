"""Failure containment: whatever the model does, no exception escapes the pass, the previous
summary (file and mirror) stays exactly as it was, and the in-flight marker is released.
Also against the real OpenAI-compatible client on a loopback server."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.core.exceptions import ImproperlyConfigured

from summaries.core.backends import (
    BackendError,
    BackendHTTPError,
    BackendTimeout,
    BackendUnavailable,
    OpenAIBackend,
)
from summaries.core.sidecar import read_for_panel, read_strict
from summaries.models import IntentSummary
from summaries.runtime import summary_backend
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_in_flight_until
from tests.fixtures.slots import add_exchanges
from tests.fixtures.summary_snapshot import SummarySnapshot
from tests.summaries.django.conftest import INTENT, VALID_REPLY, RecordingBackend, must
from tests.summaries.fake_openai_server import Behaviour, closed_port
from transcripts.models import Slot

pytestmark = pytest.mark.django_db

STORED = PassOutcome(PassResult.STORED)


@pytest.fixture
def previous(enabled_summaries, make_slot, store, backend, pushes):
    """A stored summary, then one more exchange: the next pass has real work to do."""
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    add_exchanges(slot, 1, start=2)
    return SummarySnapshot(store, slot.session.key)


def assert_contained(outcome: PassOutcome, previous: SummarySnapshot, reason: str) -> None:
    """``reason`` in the log's text form: ``backend_error:<Type>`` is the enum + detail."""
    result, _, detail = reason.partition(":") if "backend_error:" in reason else (reason, "", "")
    assert outcome == PassOutcome(PassResult(result), detail)
    assert outcome.label == reason
    assert previous.unchanged()
    slot = Slot.objects.get(name="s1")
    assert summary_in_flight_until(slot) is None
    # The old summary is still served, flagged as behind the conversation.
    data, stale = read_for_panel(previous.store, previous.key)
    assert data is not None
    assert data["intents"][0]["title"] == INTENT["title"]
    assert stale is True


def _raise(exc: BaseException) -> Callable[[RecordingBackend], None]:
    def script(backend: RecordingBackend) -> None:
        backend.raises = exc

    return script


def _reply(text: object) -> Callable[[RecordingBackend], None]:
    def script(backend: RecordingBackend) -> None:
        backend.reply = text

    return script


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (_raise(BackendError("boom")), "backend_error:BackendError"),
        (_raise(BackendTimeout("slow")), "backend_error:BackendTimeout"),
        (_raise(BackendUnavailable("down")), "backend_error:BackendUnavailable"),
        (_raise(BackendHTTPError(503)), "backend_error:BackendHTTPError"),
        (_raise(RuntimeError("a bug in the backend")), "error"),
        (_raise(ValueError("bad config")), "error"),
        (_reply("I am sorry, I cannot summarize this."), "unusable_reply"),
        (_reply(""), "unusable_reply"),
        (_reply(None), "unusable_reply"),
        (_reply("{not json"), "unusable_reply"),
        (_reply('{"intents": []}'), "unusable_reply"),
        (_reply('{"intents": [{"status": "active"}], "constraints": ["x"]}'), "unusable_reply"),
        (_reply('{"constraints": ["only notes"]}'), "unusable_reply"),
        (_reply('["intents"]'), "unusable_reply"),
        (
            _reply(VALID_REPLY + "\n" + json.dumps({"intents": [{**INTENT, "title": "Other"}]})),
            "unusable_reply",
        ),
    ],
    ids=[
        "BackendError",
        "BackendTimeout",
        "BackendUnavailable",
        "BackendHTTPError",
        "RuntimeError",
        "ValueError",
        "prose",
        "empty",
        "none",
        "broken-json",
        "no-intents",
        "untitled-intents",
        "no-intents-key",
        "list",
        "two-different-payloads",
    ],
)
def test_a_failing_backend_leaves_the_previous_summary(previous, backend, pushes, script, reason):
    script(backend)

    outcome = summary_generate(slot_name="s1", force=True)

    assert backend.calls == 2
    assert_contained(outcome, previous, reason)
    assert pushes.slots == []


def test_a_failure_is_logged_with_the_slot(previous, backend, caplog):
    backend.raises = RuntimeError("a bug in the backend")
    with caplog.at_level("INFO", logger="summaries.services"):
        summary_generate(slot_name="s1", force=True)
    failed = [r for r in caplog.records if r.levelname == "WARNING"]
    assert failed
    assert "s1" in failed[0].getMessage()
    assert any("s1" in r.getMessage() and "error" in r.getMessage() for r in caplog.records)


def test_the_next_turn_retries_after_a_failure(previous, backend):
    """A failed pass does not advance the turn mark, so the cadence does not skip a retry."""
    backend.raises = BackendTimeout("slow")
    assert not summary_generate(slot_name="s1").ok
    backend.raises = None
    assert summary_generate(slot_name="s1") == STORED
    assert backend.calls == 3


def test_a_misconfigured_model_setting_is_contained(previous, settings, monkeypatch):
    """No fallback to another model: the pass fails, loudly in the log, harmlessly."""
    monkeypatch.setattr("summaries.services.summary_backend", summary_backend)  # the real one
    settings.KIROCREW_SUMMARY_MODEL = "gpt-4o"  # neither heuristic nor openai:<model>

    outcome = summary_generate(slot_name="s1", force=True)

    assert_contained(outcome, previous, "error")


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "anthropic:claude"])
def test_a_bad_model_setting_is_improperly_configured_naming_it(settings, spec):
    settings.KIROCREW_SUMMARY_MODEL = spec
    with pytest.raises(ImproperlyConfigured, match="KIROCREW_SUMMARY_MODEL"):
        summary_backend()


def test_the_runtime_builds_the_openai_backend_from_its_own_settings(settings):
    settings.KIROCREW_SUMMARY_MODEL = " openai:llama3.1:8b "
    settings.KIROCREW_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.KIROCREW_OPENAI_TIMEOUT = 3.5
    settings.KIROCREW_OPENAI_MAX_TOKENS = 321
    settings.KIROCREW_OPENAI_RETRY_BACKOFF = 0.25
    backend = summary_backend()
    assert isinstance(backend, OpenAIBackend)
    assert (backend.name, backend.url) == (
        "openai:llama3.1:8b",
        "http://127.0.0.1:9/v1/chat/completions",
    )
    assert (backend.timeout, backend.max_tokens, backend.retry_backoff) == (3.5, 321, 0.25)


# --- the real OpenAI-compatible client against a loopback server ----------------------------------


@pytest.fixture
def openai_previous(enabled_summaries, make_slot, store, openai_model):
    slot = make_slot(turns=2)
    openai_model.enqueue(Behaviour.reply(VALID_REPLY))
    assert summary_generate(slot_name="s1") == STORED
    add_exchanges(slot, 1, start=2)
    return SummarySnapshot(store, slot.session.key)


def test_the_openai_model_stores_a_summary(enabled_summaries, make_slot, store, openai_model):
    slot = make_slot(turns=2)
    openai_model.enqueue(Behaviour.reply(VALID_REPLY))

    assert summary_generate(slot_name="s1") == STORED

    [request] = openai_model.requests
    assert request.path == "/v1/chat/completions"
    assert request.json["model"] == "test-model"
    prompt = request.json["messages"][-1]["content"]
    assert "Please fix bug number 1 in the login flow" in prompt
    assert "authorization" not in request.headers  # no key configured, none sent
    data = read_strict(store, slot.session.key)
    assert data is not None
    assert data["model"] == "openai:test-model"
    assert data["intents"][0]["title"] == INTENT["title"]
    assert IntentSummary.objects.get().model == "openai:test-model"


def test_the_openai_model_is_not_called_for_an_unchanged_transcript(openai_previous, openai_model):
    before = len(openai_model.requests)
    openai_model.enqueue(Behaviour.reply(VALID_REPLY))
    assert summary_generate(slot_name="s1", force=True) == STORED  # the new exchange

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.CURRENT)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.CURRENT)
    assert len(openai_model.requests) == before + 1


def test_openai_500_twice_keeps_the_previous_summary(openai_previous, openai_model):
    openai_model.enqueue(Behaviour.error(500), Behaviour.error(500))

    outcome = summary_generate(slot_name="s1", force=True)

    assert_contained(outcome, openai_previous, "backend_error:BackendHTTPError")
    assert len(openai_model.requests) == 3  # the first pass, then two attempts


def test_openai_500_then_success_stores(openai_previous, openai_model, store):
    openai_model.enqueue(Behaviour.error(502), Behaviour.reply(VALID_REPLY))
    assert summary_generate(slot_name="s1", force=True) == STORED
    assert must(read_strict(store, openai_previous.key))["user_turns"] == 3


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        (Behaviour.raw(b"this is not json"), "backend_error:BackendBadReply"),
        (Behaviour.json({"choices": []}), "backend_error:BackendBadReply"),
        (Behaviour.reply("Sure! Here is a summary: the user fixed bugs."), "unusable_reply"),
        (Behaviour.reply('{"intents": "none"}'), "unusable_reply"),
    ],
    ids=["body-not-json", "no-choices", "prose-content", "shapeless-payload"],
)
def test_a_malformed_openai_reply_keeps_the_previous_summary(
    openai_previous, openai_model, behaviour, reason
):
    openai_model.enqueue(behaviour)

    outcome = summary_generate(slot_name="s1", force=True)

    assert_contained(outcome, openai_previous, reason)
    assert len(openai_model.requests) == 2  # a 2xx is never retried


def test_an_openai_timeout_keeps_the_previous_summary(openai_previous, openai_model, settings):
    # The server holds the request until released: slower than any timeout, under any load.
    held = Behaviour.held(Behaviour.reply(VALID_REPLY))
    openai_model.enqueue(held, held)
    settings.KIROCREW_OPENAI_TIMEOUT = 0.2

    try:
        outcome = summary_generate(slot_name="s1", force=True)
    finally:
        openai_model.release()

    assert_contained(outcome, openai_previous, "backend_error:BackendTimeout")
    # The first pass, then one attempt: no retry (a retry would take the second hold).
    assert len(openai_model.wait_requests(2)) == 2
    assert openai_model.pending == 1


def test_a_refused_openai_connection_keeps_the_previous_summary(openai_previous, settings):
    settings.KIROCREW_OPENAI_BASE_URL = f"http://127.0.0.1:{closed_port()}/v1"

    outcome = summary_generate(slot_name="s1", force=True)

    assert_contained(outcome, openai_previous, "backend_error:BackendUnavailable")


def test_a_dropped_openai_connection_keeps_the_previous_summary(openai_previous, openai_model):
    openai_model.enqueue(Behaviour.close(), Behaviour.close())

    outcome = summary_generate(slot_name="s1", force=True)

    assert_contained(outcome, openai_previous, "backend_error:BackendUnavailable")


def test_an_openai_client_error_is_not_retried(openai_previous, openai_model):
    openai_model.enqueue(Behaviour.error(404, code="model_not_found"))

    outcome = summary_generate(slot_name="s1", force=True)

    assert_contained(outcome, openai_previous, "backend_error:BackendHTTPError")
    assert len(openai_model.requests) == 2
