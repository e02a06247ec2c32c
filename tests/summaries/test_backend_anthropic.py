"""AnthropicBackend against a loopback server with the Messages API's rules and shapes:
the request it sends, the replies it reads, and how it treats overload, rate limits,
runaways, context overflow, timeouts and a dropped connection."""

from __future__ import annotations

import traceback

import pytest

from summaries.core.backends import (
    BackendBadReply,
    BackendContextOverflow,
    BackendHTTPError,
    BackendRunaway,
    BackendTimeout,
    BackendUnavailable,
    SummaryBackend,
)
from summaries.core.backends.anthropic import API_VERSION, AnthropicBackend, anthropic_backend
from summaries.core.backends.openai import SYSTEM_LINE
from tests.summaries.fake_anthropic_server import (
    KEY,
    AnthropicRules,
    generate,
    message,
    messages_error,
)
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer, closed_port

PROMPT = "Summarize by INTENT. TRANSCRIPT\n\n[1] user: please fix the flaky login test"
REPLY = '{"intents": [{"title": "Fix the flaky login test"}], "constraints": []}'


def backend(
    server: FakeOpenAIServer, *, timeout: float = 5.0, max_tokens: int = 2000
) -> AnthropicBackend:
    return AnthropicBackend(
        "claude-test",
        KEY,
        base_url=server.base_url.removesuffix("/v1"),
        timeout=timeout,
        max_tokens=max_tokens,
        retry_backoff=0.0,
    )


def assert_secret_free(exc: BaseException) -> None:
    rendered = "".join(traceback.format_exception(exc))
    for text in (str(exc), repr(exc), rendered):
        assert KEY not in text
        assert "flaky login" not in text


def test_a_reply_is_the_text_blocks_and_the_request_is_the_documented_one(fake_anthropic):
    fake_anthropic.enqueue(message(REPLY))
    summarizer = backend(fake_anthropic, max_tokens=1234)

    assert summarizer.generate(PROMPT, []) == REPLY

    [request] = fake_anthropic.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == API_VERSION
    assert "authorization" not in request.headers
    assert request.json == {
        "model": "claude-test",
        "max_tokens": 1234,
        "system": SYSTEM_LINE,
        "messages": [{"role": "user", "content": PROMPT}],
        "temperature": 0,
        "stream": True,
    }
    assert isinstance(summarizer, SummaryBackend)
    assert summarizer.name == "anthropic:claude-test"
    assert KEY not in repr(summarizer)


def test_several_text_blocks_are_joined_and_other_blocks_ignored(fake_anthropic):
    blocks = [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": REPLY[:10]},
        {"type": "text", "text": REPLY[10:]},
    ]
    fake_anthropic.enqueue(message("", blocks=blocks))
    assert backend(fake_anthropic).generate(PROMPT, []) == REPLY


def test_a_wrong_key_is_the_servers_authentication_error_not_retried(fake_anthropic):
    fake_anthropic.profile = AnthropicRules(api_key="another-key")
    with pytest.raises(BackendHTTPError) as info:
        backend(fake_anthropic).generate(PROMPT, [])
    assert (info.value.status, info.value.code) == (401, "authentication_error")
    assert len(fake_anthropic.requests) == 1
    assert_secret_free(info.value)


def test_overloaded_529_is_retried_once_after_retry_after(fake_anthropic):
    fake_anthropic.enqueue(messages_error(529, "overloaded_error", retry_after="0"), message(REPLY))
    assert backend(fake_anthropic).generate(PROMPT, []) == REPLY
    assert len(fake_anthropic.requests) == 2


def test_overloaded_twice_is_the_overloaded_error(fake_anthropic):
    overloaded = messages_error(529, "overloaded_error", retry_after="0")
    fake_anthropic.enqueue(overloaded, overloaded, message(REPLY))
    with pytest.raises(BackendHTTPError) as info:
        backend(fake_anthropic).generate(PROMPT, [])
    assert (info.value.status, info.value.code) == (529, "overloaded_error")
    assert len(fake_anthropic.requests) == 2
    assert "fake error" not in str(info.value)  # the server's message is never copied


def test_a_rate_limit_with_retry_after_is_waited_out_once(fake_anthropic):
    fake_anthropic.enqueue(messages_error(429, "rate_limit_error", retry_after="0"), message(REPLY))
    assert backend(fake_anthropic).generate(PROMPT, []) == REPLY
    assert len(fake_anthropic.requests) == 2


@pytest.mark.parametrize("retry_after", [None, "3600"], ids=["no-retry-after", "an-hour"])
def test_a_rate_limit_without_a_short_retry_after_is_not_retried(fake_anthropic, retry_after):
    """No retry-after (a spend limit) or an hour: holding a worker for it is pointless."""
    fake_anthropic.enqueue(messages_error(429, "rate_limit_error", retry_after=retry_after))
    with pytest.raises(BackendHTTPError) as info:
        backend(fake_anthropic).generate(PROMPT, [])
    assert (info.value.status, info.value.code) == (429, "rate_limit_error")
    assert len(fake_anthropic.requests) == 1


def test_stop_reason_max_tokens_is_a_runaway(fake_anthropic):
    fake_anthropic.enqueue(message('{"intents": [{"title": "cu', stop_reason="max_tokens"))
    with pytest.raises(BackendRunaway):
        backend(fake_anthropic).generate(PROMPT, [])
    assert len(fake_anthropic.requests) == 1


def test_a_prompt_too_long_is_a_context_overflow(fake_anthropic):
    fake_anthropic.profile = AnthropicRules(api_key=KEY, context_chars=20)
    with pytest.raises(BackendContextOverflow) as info:
        backend(fake_anthropic).generate(PROMPT, [])
    assert info.value.code == "invalid_request_error"
    assert len(fake_anthropic.requests) == 1


def test_a_timeout_is_not_asked_again(fake_anthropic):
    fake_anthropic.enqueue(Behaviour.sleep(600.0, message(REPLY)), message(REPLY))
    with pytest.raises(BackendTimeout) as info:
        backend(fake_anthropic, timeout=0.3).generate(PROMPT, [])
    assert len(fake_anthropic.requests) == 1
    assert_secret_free(info.value)


def test_a_dropped_connection_is_retried_once(fake_anthropic):
    fake_anthropic.enqueue(Behaviour.close(), message(REPLY))
    assert backend(fake_anthropic).generate(PROMPT, []) == REPLY


def test_a_refused_connection_is_unavailable():
    summarizer = AnthropicBackend(
        "claude-test", KEY, base_url=f"http://127.0.0.1:{closed_port()}", retry_backoff=0.0
    )
    with pytest.raises(BackendUnavailable) as info:
        summarizer.generate(PROMPT, [])
    assert_secret_free(info.value)


@pytest.mark.parametrize(
    "reply",
    [
        Behaviour.raw(b"<html>502 Bad Gateway</html>", content_type="text/html"),
        Behaviour.json({"type": "message", "content": "not a list"}),
        Behaviour.json({"type": "message", "content": [], "stop_reason": "end_turn"}),
        Behaviour.json({"choices": [{"message": {"content": REPLY}}]}),
    ],
    ids=["html", "content-not-a-list", "no-text", "openai-shaped"],
)
def test_a_malformed_reply_is_a_bad_reply_not_retried(fake_anthropic, reply):
    fake_anthropic.enqueue(reply)
    with pytest.raises(BackendBadReply):
        backend(fake_anthropic).generate(PROMPT, [])
    assert len(fake_anthropic.requests) == 1


def test_an_oversize_reply_is_refused_as_a_runaway(fake_anthropic):
    fake_anthropic.enqueue(message("x" * (3 * 1024 * 1024)))
    with pytest.raises(BackendRunaway):
        backend(fake_anthropic).generate(PROMPT, [])


class _Settings:
    KIROCREW_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
    ANTHROPIC_API_KEY = ""
    KIROCREW_ANTHROPIC_TIMEOUT = 60.0
    KIROCREW_ANTHROPIC_MAX_TOKENS = 2000


def test_the_factory_needs_a_model_and_the_key():
    with pytest.raises(ValueError, match="needs a model name"):
        anthropic_backend(" ", _Settings())
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        anthropic_backend("claude-test", _Settings())
    keyed = _Settings()
    keyed.ANTHROPIC_API_KEY = f" {KEY}\n"
    built = anthropic_backend("claude-test", keyed)
    assert built.url == "https://api.anthropic.com/v1/messages"
    assert KEY not in repr(built)


def test_a_timed_out_generation_ends_on_the_server(fake_anthropic):
    """Streamed: giving up closes the connection, and the generation (billed) stops."""
    fake_anthropic.enqueue(generate(REPLY * 40, token_delay=0.05), message(REPLY))
    with pytest.raises(BackendTimeout):
        backend(fake_anthropic, timeout=0.3).generate(PROMPT, [])
    [generation] = fake_anthropic.wait_generations(1)
    assert generation.client_left
    assert generation.stopped_early
    assert len(fake_anthropic.requests) == 1


def test_a_streamed_reply_is_read_from_its_events(fake_anthropic):
    fake_anthropic.enqueue(generate(REPLY, token_delay=0.001))
    assert backend(fake_anthropic).generate(PROMPT, []) == REPLY


def test_a_streamed_max_tokens_is_a_runaway(fake_anthropic):
    fake_anthropic.enqueue(
        generate('{"intents": [{"ti', token_delay=0.001, stop_reason="max_tokens")
    )
    with pytest.raises(BackendRunaway):
        backend(fake_anthropic).generate(PROMPT, [])


def test_an_overloaded_error_event_mid_stream_is_retried_once(fake_anthropic):
    overloaded = (
        b"event: message_start\ndata: "
        b'{"type": "message_start", "message": {"type": "message", "content": []}}\n\n'
        b"event: error\ndata: "
        b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    )
    fake_anthropic.enqueue(
        Behaviour.raw(overloaded, content_type="text/event-stream"), message(REPLY)
    )
    assert backend(fake_anthropic).generate(PROMPT, []) == REPLY
    assert len(fake_anthropic.requests) == 2
