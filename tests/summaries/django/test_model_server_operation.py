"""The pass against a model server that behaves like a real local one (the loopback fake
with llama.cpp's habits): a context window to respect, runaway replies to back off from,
and failures that say what failed, in the log and on the command line."""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.core.management import call_command

from summaries.core.prompt import build_prompt, input_budget
from summaries.services import PassOutcome, PassResult, summary_generate
from tests.fixtures.slots import add_exchanges
from tests.summaries.django.conftest import VALID_REPLY
from tests.summaries.fake_openai_server import (
    Behaviour,
    FakeOpenAIServer,
    ServerProfile,
    closed_port,
)
from transcripts.services import session_append_row

pytestmark = pytest.mark.django_db

STORED = PassOutcome(PassResult.STORED)
INSTRUCTIONS = len(build_prompt((), 0))


@pytest.fixture
def model(settings, openai_model: FakeOpenAIServer) -> FakeOpenAIServer:
    settings.KIROCREW_OPENAI_MAX_TOKENS = 1000
    return openai_model


def prompts(server: FakeOpenAIServer) -> list[str]:
    return [r.json["messages"][-1]["content"] for r in server.requests]


@pytest.fixture
def long_session(enabled_summaries, make_slot):
    """About 100,000 characters of conversation: more than any budget here."""
    slot = make_slot(turns=2)
    for i in range(25):
        session_append_row(key=slot.session.key, role="user", content=f"req {i} " + "x " * 1900)
        session_append_row(key=slot.session.key, role="assistant", content=f"done {i}")
    return slot


def test_a_context_overflow_is_answered_with_a_shorter_transcript(long_session, model):
    """The server refuses the prompt as over its window; the pass halves the transcript
    (at most twice) instead of giving up, so a long session still gets a summary."""
    model.profile = ServerProfile(context_chars=INSTRUCTIONS + 12_000)
    model.default = Behaviour.reply(VALID_REPLY)

    assert summary_generate(slot_name="s1", force=True) == STORED

    sent = [len(p) for p in prompts(model)]
    assert len(sent) == 3  # 40,000 -> 20,000 -> 10,000 characters of transcript
    assert sent[0] > sent[1] > sent[2]
    assert sent[2] <= INSTRUCTIONS + 12_000


def test_an_overflow_refused_as_an_empty_stream_is_asked_unstreamed_then_shrunk(
    long_session, model
):
    """llama_cpp.server answers a streamed over-long prompt with a 200 stream that ends
    before any event (found by ``make model-smoke``): the request is asked once more
    unstreamed, gets the 400, and the pass shrinks the transcript as for any overflow."""
    model.profile = ServerProfile(context_chars=INSTRUCTIONS + 12_000, empty_stream_overflow=True)
    model.default = Behaviour.reply(VALID_REPLY)

    assert summary_generate(slot_name="s1", force=True) == STORED

    streamed = [r.json["stream"] for r in model.requests]
    assert streamed[:2] == [True, False]  # the empty stream, then its refusal whole
    assert streamed[-1] is True  # the shorter prompt streams again
    assert len(prompts(model)[-1]) <= INSTRUCTIONS + 12_000


def test_an_overflow_that_no_shrink_cures_ends_as_a_model_failure(long_session, model):
    model.profile = ServerProfile(context_chars=INSTRUCTIONS)  # nothing fits
    outcome = summary_generate(slot_name="s1", force=True)
    assert outcome == PassOutcome(PassResult.BACKEND_ERROR, "BackendContextOverflow")
    assert len(model.requests) == 3  # bounded: the first and two shorter ones


def test_the_context_window_setting_sizes_the_transcript(long_session, model, settings):
    """Told the window, the pass fits the first request to it: no refused request first."""
    settings.KIROCREW_SUMMARY_CONTEXT_TOKENS = 4096
    budget = input_budget(4096, 1000)
    model.profile = ServerProfile(context_chars=4096 * 3)  # the same 3 characters a token
    model.enqueue(Behaviour.reply(VALID_REPLY))

    assert summary_generate(slot_name="s1", force=True) == STORED

    [prompt] = prompts(model)
    assert len(prompt) <= INSTRUCTIONS + budget
    assert budget < 40_000


def test_after_a_runaway_reply_turn_ends_back_off(enabled_summaries, make_slot, model, settings):
    """A reply that runs to max_tokens is thrown away; the next turn end must not pay for
    the same runaway again. An explicit request (forced) still asks the model."""
    settings.KIROCREW_SUMMARY_BACKOFF = 600
    slot = make_slot(turns=2)
    model.enqueue(Behaviour.reply('{"intents": [{"title": "cut', finish_reason="length"))

    assert summary_generate(slot_name="s1") == PassOutcome(
        PassResult.BACKEND_ERROR, "BackendRunaway"
    )
    add_exchanges(slot, 1, start=2)
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.BACKING_OFF)
    assert len(model.requests) == 1

    model.enqueue(Behaviour.reply(VALID_REPLY))
    assert summary_generate(slot_name="s1", force=True) == STORED
    add_exchanges(slot, 1, start=3)
    model.enqueue(Behaviour.reply(VALID_REPLY))
    assert summary_generate(slot_name="s1") == STORED  # a stored summary ends the back-off


def test_an_unusable_reply_backs_off_too(enabled_summaries, make_slot, model, settings):
    settings.KIROCREW_SUMMARY_BACKOFF = 600
    slot = make_slot(turns=2)
    model.enqueue(Behaviour.reply("<html><body>Bad gateway</body></html>"))
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.UNUSABLE_REPLY)
    add_exchanges(slot, 1, start=2)
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.BACKING_OFF)
    assert len(model.requests) == 1


def test_a_zero_back_off_retries_on_the_next_turn_end(
    enabled_summaries, make_slot, model, settings
):
    settings.KIROCREW_SUMMARY_BACKOFF = 0
    slot = make_slot(turns=2)
    model.enqueue(Behaviour.reply("not json"), Behaviour.reply(VALID_REPLY))
    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.UNUSABLE_REPLY)
    add_exchanges(slot, 1, start=2)
    assert summary_generate(slot_name="s1") == STORED


def test_a_model_failure_is_a_warning_naming_what_failed(
    enabled_summaries, make_slot, model, settings, caplog
):
    settings.KIROCREW_OPENAI_BASE_URL = f"http://127.0.0.1:{closed_port()}/v1"
    make_slot(turns=2)
    with caplog.at_level(logging.INFO, logger="summaries.services"):
        summary_generate(slot_name="s1", force=True)
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    text = warning.getMessage()
    assert "s1" in text
    assert "backend_error:BackendUnavailable" in text
    assert "cannot connect to model server" in text


def test_a_too_few_turns_refusal_stays_at_info(enabled_summaries, make_slot, model, caplog):
    make_slot(turns=1)
    with caplog.at_level(logging.INFO, logger="summaries.services"):
        assert summary_generate(slot_name="s1", force=True).reason is PassResult.TOO_FEW_TURNS
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_summarize_command_prints_why_the_model_failed(
    enabled_summaries, make_slot, model, settings
):
    settings.KIROCREW_OPENAI_BASE_URL = f"http://127.0.0.1:{closed_port()}/v1"
    make_slot(turns=2)
    err = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("summarize", "s1", stdout=StringIO(), stderr=err)
    assert exited.value.code == 1
    assert "backend_error:BackendUnavailable" in err.getvalue()
    assert "cannot connect to model server" in err.getvalue()
    assert "KIROCREW_SUMMARY_MODEL" in err.getvalue()
