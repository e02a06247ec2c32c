"""A real summary pass against a real local model server (see conftest.py): the request
is accepted, the reply is stored or cleanly refused, a prompt over the server's window
ends cleanly, and no planted secret ever reaches the server. Every request goes through
the tests' loopback fake in its forwarding mode, a process of its own that records what
kirocrew really sent."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from summaries.core.gate import PassResult
from summaries.core.sidecar import summary_for_panel
from summaries.services import summary_generate
from tests.smoke.conftest import API_KEY, MODEL_ALIAS, SERVER_CONTEXT, LlamaServer, Report
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer, RecordedRequest
from transcripts.models import Slot
from transcripts.runtime import get_store
from transcripts.services import session_append_row

pytestmark = [pytest.mark.model_smoke, pytest.mark.django_db, pytest.mark.timeout(1800)]

# Planted in the sessions; the redactor must take them out before any request is built.
SECRETS = (
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq93kfQ2",
    "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
)
PLANTED = (
    f"Deploy with AWS_SECRET_ACCESS_KEY={SECRETS[0]} in the environment, please.",
    f"The payment test failed; the key in .env is {SECRETS[1]} if that helps.",
)
#: Kirocrew is told a window four times the server's: the first long prompt is refused.
TOLD_CONTEXT = 4 * SERVER_CONTEXT
#: Pass outcomes that end cleanly when the model is too small to answer well.
CLEAN = {PassResult.STORED, PassResult.UNUSABLE_REPLY, PassResult.BACKEND_ERROR}


@pytest.fixture
def relay(
    llama_server: LlamaServer, fake_openai: FakeOpenAIServer, settings: Any
) -> FakeOpenAIServer:
    """kirocrew's openai: backend, pointed at the recording relay in front of the server."""
    fake_openai.default = Behaviour.forward_to(llama_server.base)
    settings.KIROCREW_OPENAI_BASE_URL = fake_openai.base_url
    settings.KIROCREW_OPENAI_API_KEY = API_KEY
    settings.KIROCREW_OPENAI_TIMEOUT = 600.0
    settings.KIROCREW_OPENAI_MAX_TOKENS = 600
    settings.KIROCREW_SUMMARY_CONTEXT_TOKENS = TOLD_CONTEXT
    return fake_openai


def heuristic_first(slot: Slot, settings: Any) -> Any:
    """A summary already stored (by the heuristic), so a refused model pass can be seen
    to keep it. The caller then adds turns, or the model pass finds it current."""
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    assert summary_generate(slot_name=slot.name, force=True).reason is PassResult.STORED
    before, _ = summary_for_panel(get_store(), slot.session.key)
    assert before is not None
    settings.KIROCREW_SUMMARY_MODEL = f"openai:{MODEL_ALIAS}"
    return before


def no_secret_sent(requests: list[RecordedRequest]) -> None:
    for request in requests:
        text = request.body.decode("utf-8", "replace")
        for secret in SECRETS:
            assert secret not in text
            assert secret[-16:] not in text  # no cut piece of it either
        assert API_KEY not in text


def clean_logs(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert "Traceback" not in caplog.text
    for secret in (*SECRETS, API_KEY):
        assert secret not in caplog.text


def outcome_line(
    report: Report, what: str, outcome: Any, requests: list[RecordedRequest], took: float
) -> None:
    statuses = [r.upstream_status for r in requests]
    sizes = [len(r.json["messages"][-1]["content"]) for r in requests if r.json]
    formats = [
        (r.json.get("response_format") or {}).get("type", "none") for r in requests if r.json
    ]
    report.add(
        f"{what}: outcome {outcome.reason.value}"
        + (f" ({outcome.detail})" if outcome.detail else "")
        + f"; {len(requests)} request(s), server statuses {statuses}, "
        f"prompt sizes {sizes} chars, response_format {formats}; {took:.1f} s"
    )


def test_a_real_pass_is_accepted_and_its_reply_stored_or_cleanly_refused(
    relay: FakeOpenAIServer,
    make_slot: Callable[..., Slot],
    enabled_summaries: Any,
    settings: Any,
    caplog: pytest.LogCaptureFixture,
    smoke_report: Report,
) -> None:
    slot = make_slot(turns=3)
    before = heuristic_first(slot, settings)
    for line in PLANTED:  # new turns: the stored summary no longer covers the transcript
        session_append_row(key=slot.session.key, role="user", content=line)
        session_append_row(key=slot.session.key, role="assistant", content="Done, deployed.")
    caplog.set_level(logging.INFO)

    started = time.monotonic()
    outcome = summary_generate(slot_name=slot.name, force=True)
    took = time.monotonic() - started

    requests = relay.requests
    outcome_line(smoke_report, "short session with planted secrets", outcome, requests, took)
    assert requests, "no request reached the server"
    assert requests[-1].upstream_status == 200, "the server did not accept the request"
    no_secret_sent(requests)
    smoke_report.add(f"  planted secrets in any request body: none ({len(SECRETS)} checked)")
    clean_logs(caplog)
    assert outcome.reason in CLEAN, outcome
    after, _ = summary_for_panel(get_store(), slot.session.key)
    assert after is not None
    if outcome.reason is PassResult.STORED:
        assert after.model == f"openai:{MODEL_ALIAS}"
        titles = [intent.title for intent in after.intents]
        smoke_report.add(f"  stored: {len(titles)} intent(s) {titles[:3]}")
    else:
        assert after.generated_at == before.generated_at  # the previous summary is kept
        logged = [r.getMessage() for r in caplog.records if slot.name in r.getMessage()]
        assert logged, "the refusal was not logged"
        smoke_report.add(f"  refused, previous summary kept; logged: {logged[-1][:160]}")


def test_a_session_longer_than_the_servers_window_ends_cleanly(
    relay: FakeOpenAIServer,
    make_slot: Callable[..., Slot],
    enabled_summaries: Any,
    settings: Any,
    caplog: pytest.LogCaptureFixture,
    smoke_report: Report,
) -> None:
    slot = make_slot(turns=2)
    before = heuristic_first(slot, settings)
    for i in range(30):
        session_append_row(
            key=slot.session.key,
            role="user",
            content=f"Step {i}: refactor module {i} of the billing service. " + "details " * 400,
        )
        session_append_row(key=slot.session.key, role="assistant", content=f"Refactored {i}.")
    session_append_row(key=slot.session.key, role="user", content=PLANTED[0])
    caplog.set_level(logging.INFO)

    started = time.monotonic()
    outcome = summary_generate(slot_name=slot.name, force=True)
    took = time.monotonic() - started

    requests = relay.requests
    outcome_line(
        smoke_report,
        f"long session, kirocrew told {TOLD_CONTEXT} tokens, server has {SERVER_CONTEXT}",
        outcome,
        requests,
        took,
    )
    # The server refuses the over-long prompt in one of two ways: a 400
    # context_length_exceeded, or (llama-cpp-python 0.3.36 asked to stream) a 200 whose
    # event stream closes before its first event (its ValueError is raised in the stream).
    first = next(r for r in requests if r.upstream_status != 500)  # past the format step
    refused_400 = first.upstream_status == 400
    assert refused_400 or (first.upstream_status == 200 and first.upstream_bytes == 0), first
    if refused_400:
        assert "context_length_exceeded" in (first.upstream_error or "")
        smoke_report.add(f"  the server refused with 400: {first.upstream_error}")
    else:
        smoke_report.add(
            "  the server refused by a 200 whose stream closed with no event "
            f"(bytes relayed per request: {[r.upstream_bytes for r in requests]})"
        )
    # bounded: a format step-down, then the first and at most two shorter prompts (an
    # overflow), each asked at most twice (an empty stream is asked once more unstreamed)
    assert len(requests) <= 7
    sizes = [len(r.json["messages"][-1]["content"]) for r in requests]
    assert sizes == sorted(sizes, reverse=True)
    no_secret_sent(requests)
    clean_logs(caplog)
    assert outcome.reason in CLEAN, outcome
    logged = [r.getMessage() for r in caplog.records if slot.name in r.getMessage()]
    smoke_report.add(f"  logged: {logged[-1][:200] if logged else '(nothing)'}")
    if outcome.reason is not PassResult.STORED:
        after, _ = summary_for_panel(get_store(), slot.session.key)
        assert after is not None
        assert after.generated_at == before.generated_at
