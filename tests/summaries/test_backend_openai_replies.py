"""OpenAIBackend against a real chat-completions server on loopback: the request it sends,
the replies it accepts, malformed replies, and the reply-size cap."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from summaries.core.backends import (
    BackendBadReply,
    BackendRunaway,
    OpenAIBackend,
    SummaryBackend,
)
from summaries.core.backends.http import MAX_OUTPUT_TOKENS, MAX_REPLY_BYTES
from summaries.core.backends.openai import RESPONSE_FORMAT, SYSTEM_LINE
from summaries.core.intents import CitedReplyIntent
from tests.summaries.fake_openai_server import Behaviour
from tests.summaries.openai_backend_helpers import (
    API_KEY,
    PROMPT,
    REPLY,
    TURNS,
    assert_secret_free,
    make_backend,
)

# --- success -------------------------------------------------------------------------------


def test_success_returns_content_and_sends_the_protocol_body(fake_openai):
    fake_openai.enqueue(Behaviour.reply(REPLY))
    backend = make_backend(fake_openai, max_tokens=1234)

    assert backend.generate(PROMPT, TURNS) == REPLY

    [request] = fake_openai.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.json == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": SYSTEM_LINE},
            {"role": "user", "content": PROMPT},
        ],
        "temperature": 0,
        "max_tokens": 1234,
        "stream": True,
        "response_format": RESPONSE_FORMAT,
    }


def test_the_reply_schema_sent_is_the_payload_model(fake_openai):
    """The server is asked for the reply's shape as the payload model derives it."""
    fake_openai.enqueue(Behaviour.reply(REPLY))
    make_backend(fake_openai).generate(PROMPT, TURNS)

    sent = fake_openai.requests[0].json["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "intent_summary"
    schema = sent["json_schema"]["schema"]
    assert schema["required"] == ["intents"]
    assert set(schema["properties"]) == {"intents", "constraints"}
    intent = schema["$defs"]["CitedReplyIntent"]
    assert set(intent["properties"]) == set(CitedReplyIntent.model_fields)
    assert "cites" in intent["properties"]  # the rows behind status and verified
    assert {"title", "ranges", "status", "verified", "next_steps"} <= set(intent["properties"])
    assert intent["properties"]["status"]["enum"] == ["active", "completed", "abandoned"]
    assert schema["$defs"]["NextStep"]["required"] == ["what"]


@pytest.mark.parametrize("api_key", [None, "", "   \n"])
def test_no_authorization_header_without_a_key(fake_openai, api_key):
    fake_openai.enqueue(Behaviour.reply(REPLY))
    assert make_backend(fake_openai, api_key=api_key).generate(PROMPT, TURNS) == REPLY
    [request] = fake_openai.requests
    assert "authorization" not in request.headers


def test_key_from_an_env_file_is_stripped(fake_openai):
    fake_openai.enqueue(Behaviour.reply(REPLY))
    make_backend(fake_openai, api_key=f"  {API_KEY}\n").generate(PROMPT, TURNS)
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_trailing_slash_in_base_url(fake_openai):
    fake_openai.enqueue(Behaviour.reply(REPLY))
    backend = OpenAIBackend("gpt-test", fake_openai.base_url + "/", None)
    assert backend.generate(PROMPT, TURNS) == REPLY
    assert fake_openai.requests[0].path == "/v1/chat/completions"


def test_a_reply_cut_at_max_tokens_is_a_runaway(fake_openai):
    """Cut JSON is never a summary: the pass backs off instead of storing or re-asking."""
    fake_openai.enqueue(Behaviour.reply('{"intents": [{"title": "cut', finish_reason="length"))
    with pytest.raises(BackendRunaway) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert "max_tokens" in str(info.value)
    assert len(fake_openai.requests) == 1


def test_max_tokens_is_clamped_to_what_a_summary_needs(fake_openai):
    fake_openai.enqueue(Behaviour.reply(REPLY))
    make_backend(fake_openai, max_tokens=1_000_000).generate(PROMPT, TURNS)
    assert fake_openai.requests[0].json["max_tokens"] == MAX_OUTPUT_TOKENS


def test_chunked_reply_under_the_cap(fake_openai):
    fake_openai.enqueue(Behaviour.reply(REPLY, chunked=True))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == REPLY


def test_name_and_protocol(fake_openai):
    backend = make_backend(fake_openai)
    assert backend.name == "openai:gpt-test"
    assert isinstance(backend, SummaryBackend)


def test_shared_backend_is_thread_safe(fake_openai):
    fake_openai.default = Behaviour.reply(REPLY, delay=0.05)
    backend = make_backend(fake_openai)
    results: list[str] = []
    errors: list[BaseException] = []

    def call() -> None:
        try:
            results.append(backend.generate(PROMPT, TURNS))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert errors == []
    assert results == [REPLY] * 8
    assert len(fake_openai.requests) == 8


def test_caller_transport_is_reused_and_left_open(fake_openai):
    transport = httpx.HTTPTransport()
    try:
        fake_openai.enqueue(Behaviour.reply(REPLY), Behaviour.reply(REPLY))
        backend = make_backend(fake_openai, transport=transport)
        assert backend.generate(PROMPT, TURNS) == REPLY
        assert backend.generate(PROMPT, TURNS) == REPLY
    finally:
        transport.close()
    assert len(fake_openai.requests) == 2


# --- malformed replies ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "fragment"),
    [
        (Behaviour.raw(b"<html>502 Bad Gateway</html>", content_type="text/html"), "not JSON"),
        (Behaviour.raw(b'{"choices": [{"message": {"content": "x"'), "not JSON"),
        (Behaviour.raw(b"\xff\xfe\x00garbage"), "not JSON"),
        (Behaviour.json(["not", "an", "object"]), "not an object"),
        (Behaviour.json({"id": "x", "object": "chat.completion"}), "no choices"),
        (Behaviour.json({"choices": []}), "no choices"),
        (Behaviour.json({"error": {"message": "oops"}}), "no choices"),
        (Behaviour.json({"choices": [{"text": "legacy completion"}]}), "no message"),
        (Behaviour.json({"choices": [{"message": {"role": "assistant"}}]}), "NoneType"),
        (Behaviour.json({"choices": [{"message": {"content": None}}]}), "NoneType"),
        (Behaviour.json({"choices": [{"message": {"content": {"intents": []}}}]}), "dict"),
        (Behaviour.json({"choices": [{"message": {"content": 42}}]}), "int"),
        (Behaviour.reply("  \n"), "empty"),
    ],
)
def test_malformed_reply_is_a_bad_reply_and_not_retried(fake_openai, behaviour, fragment):
    fake_openai.enqueue(behaviour)
    with pytest.raises(BackendBadReply, match=fragment) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert len(fake_openai.requests) == 1
    assert_secret_free(info.value)


# --- bounded output ------------------------------------------------------------------------


def oversize_reply() -> bytes:
    content = "x" * (MAX_REPLY_BYTES + 1)
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_oversize_body_is_a_bad_reply(fake_openai, chunked):
    fake_openai.enqueue(Behaviour.raw(oversize_reply(), chunked=chunked))
    with pytest.raises(BackendBadReply, match="cap") as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert len(fake_openai.requests) == 1
    assert_secret_free(info.value)


def test_body_just_under_the_cap_is_accepted(fake_openai):
    envelope = json.dumps({"choices": [{"message": {"content": ""}}]}).encode()
    content = "y" * (MAX_REPLY_BYTES - len(envelope))
    body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
    assert len(body) == MAX_REPLY_BYTES
    fake_openai.enqueue(Behaviour.raw(body, chunked=True))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == content
