"""Structured output is optional for OpenAI-compatible servers: a server that refuses
``json_schema`` gets a plain JSON-object request instead, over a real loopback socket."""

from __future__ import annotations

import pytest

from summaries.core.backends import BackendHTTPError
from summaries.core.backends.openai import JSON_OBJECT_FORMAT, OpenAIBackend
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

REPLY = '{"intents": [], "constraints": []}'


def backend(server: FakeOpenAIServer) -> OpenAIBackend:
    return OpenAIBackend("m", server.base_url, api_key=None, timeout=5, retry_backoff=0)


@pytest.mark.parametrize("status", [400, 422])
def test_a_server_without_structured_output_is_asked_for_a_json_object(
    fake_openai: FakeOpenAIServer, status: int
) -> None:
    fake_openai.enqueue(
        Behaviour.error(
            status, code="invalid_request_error", message="'response_format' is not supported"
        ),
        Behaviour.reply(REPLY),
        Behaviour.reply(REPLY),
    )
    summarizer = backend(fake_openai)

    assert summarizer.generate("prompt", []) == REPLY
    first, second = (r.json["response_format"] for r in fake_openai.requests)
    assert first["type"] == "json_schema"
    assert second == JSON_OBJECT_FORMAT
    # Remembered: the next pass with this backend does not spend a refused request.
    assert summarizer.generate("prompt", []) == REPLY
    assert fake_openai.requests[2].json["response_format"] == JSON_OBJECT_FORMAT
    assert len(fake_openai.requests) == 3


def test_a_refusal_of_the_plain_format_too_is_the_error(fake_openai: FakeOpenAIServer) -> None:
    refusal = Behaviour.error(400, message="response_format json_object is not supported")
    fake_openai.enqueue(refusal, refusal)

    with pytest.raises(BackendHTTPError) as caught:
        backend(fake_openai).generate("prompt", [])

    assert caught.value.status == 400
    assert len(fake_openai.requests) == 2  # one fallback, never a loop


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
