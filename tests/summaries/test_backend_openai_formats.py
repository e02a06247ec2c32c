"""Structured output is optional for OpenAI-compatible servers: a server that refuses a
``response_format`` (naming it) gets the next one down the ladder, json_schema ->
json_object with the schema (llama.cpp's form) -> json_object, and the step is remembered
for the process. Over a real loopback socket."""

from __future__ import annotations

import pytest

from summaries.core.backends import BackendHTTPError
from summaries.core.backends.openai import (
    JSON_OBJECT_FORMAT,
    JSON_OBJECT_SCHEMA_FORMAT,
    OpenAIBackend,
    OutputFormat,
)
from summaries.core.intents import reply_json_schema
from tests.summaries.fake_openai_server import LLAMA_CPP, Behaviour, FakeOpenAIServer

REPLY = '{"intents": [], "constraints": []}'


def backend(server: FakeOpenAIServer, model: str = "m") -> OpenAIBackend:
    return OpenAIBackend(model, server.base_url, api_key=None, timeout=5, retry_backoff=0)


def formats(server: FakeOpenAIServer) -> list[str]:
    return [r.json["response_format"]["type"] for r in server.requests]


@pytest.mark.parametrize("status", [400, 422])
def test_a_server_without_structured_output_is_asked_for_a_json_object_with_the_schema(
    fake_openai: FakeOpenAIServer, status: int
) -> None:
    fake_openai.enqueue(
        Behaviour.error(
            status, code="invalid_request_error", message="'response_format' is not supported"
        ),
        Behaviour.reply(REPLY),
    )

    assert backend(fake_openai).generate("prompt", []) == REPLY

    first, second = (r.json["response_format"] for r in fake_openai.requests)
    assert first["type"] == "json_schema"
    assert second == JSON_OBJECT_SCHEMA_FORMAT
    assert second["schema"] == reply_json_schema()  # the shape still travels


def test_llama_cpp_answering_500_naming_json_schema_is_a_format_refusal_not_a_retry(
    fake_openai: FakeOpenAIServer,
) -> None:
    """llama_cpp.server fails json_schema with HTTP 500 naming it: retrying the same body
    (as any 5xx was) fails twice and the pass gives up."""
    fake_openai.profile = LLAMA_CPP
    fake_openai.enqueue(Behaviour.reply(REPLY))

    assert backend(fake_openai).generate("prompt", []) == REPLY

    assert formats(fake_openai) == ["json_schema", "json_object"]
    assert fake_openai.requests[1].json["response_format"] == JSON_OBJECT_SCHEMA_FORMAT


def test_the_fallback_is_remembered_for_the_server_and_model_across_passes(
    fake_openai: FakeOpenAIServer,
) -> None:
    """Every pass builds a new backend (the runtime resolves it per pass): the refused
    format must not be paid for again by each of them."""
    fake_openai.profile = LLAMA_CPP
    fake_openai.default = Behaviour.reply(REPLY)

    backend(fake_openai).generate("prompt", [])
    backend(fake_openai).generate("prompt", [])
    assert backend(fake_openai).output_format is OutputFormat.JSON_OBJECT_SCHEMA
    # Another model on the same server has not been refused anything yet.
    backend(fake_openai, model="other").generate("prompt", [])

    assert formats(fake_openai) == [
        "json_schema",
        "json_object",
        "json_object",
        "json_schema",
        "json_object",
    ]


def test_the_ladder_ends_at_a_plain_json_object(fake_openai: FakeOpenAIServer) -> None:
    refusal = Behaviour.error(400, message="response_format is not supported")
    fake_openai.enqueue(refusal, refusal, Behaviour.reply(REPLY))

    assert backend(fake_openai).generate("prompt", []) == REPLY

    assert fake_openai.requests[2].json["response_format"] == JSON_OBJECT_FORMAT


def test_a_refusal_of_the_plain_format_too_is_the_error(fake_openai: FakeOpenAIServer) -> None:
    refusal = Behaviour.error(400, message="response_format json_object is not supported")
    fake_openai.enqueue(refusal, refusal, refusal)

    with pytest.raises(BackendHTTPError) as caught:
        backend(fake_openai).generate("prompt", [])

    assert caught.value.status == 400
    assert len(fake_openai.requests) == 3  # down the ladder once, never a loop


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "model 'm' not found"),  # a 400 about something else: no format cures it
        (401, "response_format"),
        (403, "json_schema"),
        (404, "response_format"),
    ],
)
def test_no_other_format_cures_another_error(
    fake_openai: FakeOpenAIServer, status: int, message: str
) -> None:
    fake_openai.enqueue(Behaviour.error(status, message=message))

    with pytest.raises(BackendHTTPError):
        backend(fake_openai).generate("prompt", [])

    assert len(fake_openai.requests) == 1
