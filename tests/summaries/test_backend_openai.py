"""OpenAIBackend against a real chat-completions server on loopback."""

from __future__ import annotations

import json
import pickle
import re
import threading
import traceback
from collections.abc import Callable, Sequence

import httpx
import pytest

from summaries.core.backends import (
    BACKENDS,
    BackendBadReply,
    BackendError,
    BackendHTTPError,
    BackendTimeout,
    BackendUnavailable,
    OpenAIBackend,
    SummaryBackend,
    register_backend,
    resolve_backend,
)
from summaries.core.backends.openai import MAX_REPLY_BYTES, RESPONSE_FORMAT, SYSTEM_LINE
from summaries.core.intents import ReplyIntent
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries import fake_openai_server
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer, closed_port

# Makes the fixture visible to this module until the root conftest registers the
# module through pytest_plugins.
fake_openai = fake_openai_server.fake_openai

API_KEY = "sk-proj-TESTKEYdoNotLeak1234567890"
PROMPT = "Summarize by INTENT. TRANSCRIPT\n\n[1] user: please fix the flaky login test"
REPLY = '{"intents": [{"title": "Fix the flaky login test"}], "constraints": []}'
TURNS: Sequence[TranscriptTurn] = (
    TranscriptTurn(
        index=1, role="user", text="please fix the flaky login test", ts=None, user_turn=1
    ),
)


def make_backend(
    server: FakeOpenAIServer, *, api_key: str | None = API_KEY, **kwargs: object
) -> OpenAIBackend:
    kwargs.setdefault("retry_backoff", 0.0)
    return OpenAIBackend("gpt-test", server.base_url, api_key, **kwargs)  # type: ignore[arg-type]


def assert_secret_free(exc: BaseException) -> None:
    """Neither the key nor the prompt reaches str, repr or a logged traceback."""
    rendered = "".join(traceback.format_exception(exc))
    for text in (str(exc), repr(exc), rendered):
        assert API_KEY not in text
        assert "flaky login" not in text


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
    intent = schema["$defs"]["ReplyIntent"]
    assert set(intent["properties"]) == set(ReplyIntent.model_fields)
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


def test_truncated_reply_is_still_returned(fake_openai, caplog):
    fake_openai.enqueue(Behaviour.reply('{"intents": [{"title": "cut', finish_reason="length"))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == '{"intents": [{"title": "cut'
    assert "max_tokens" in caplog.text


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


# --- retries and HTTP errors ---------------------------------------------------------------


def test_500_then_200_succeeds_after_exactly_two_requests(fake_openai):
    fake_openai.enqueue(Behaviour.error(500), Behaviour.reply(REPLY))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == REPLY
    assert len(fake_openai.requests) == 2
    # The retry is the same request.
    assert fake_openai.requests[0].json == fake_openai.requests[1].json


def test_retry_waits_the_backoff(fake_openai):
    fake_openai.enqueue(Behaviour.error(503), Behaviour.reply(REPLY))
    make_backend(fake_openai, retry_backoff=0.3).generate(PROMPT, TURNS)
    first, second = fake_openai.requests
    assert second.received_at - first.received_at >= 0.3


def test_500_twice_is_an_http_error_after_exactly_two_requests(fake_openai):
    fake_openai.enqueue(Behaviour.error(500), Behaviour.error(502, code="upstream_down"))
    with pytest.raises(BackendHTTPError) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert info.value.status == 502
    assert info.value.code == "upstream_down"
    assert "502" in str(info.value)
    assert len(fake_openai.requests) == 2
    assert fake_openai.pending == 0
    assert_secret_free(info.value)


@pytest.mark.parametrize("status", [400, 401, 404, 429])
def test_4xx_is_an_http_error_after_exactly_one_request(fake_openai, status):
    fake_openai.enqueue(Behaviour.error(status, code="model_not_found"))
    with pytest.raises(BackendHTTPError) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert info.value.status == status
    assert len(fake_openai.requests) == 1
    assert_secret_free(info.value)


def test_error_body_text_is_not_copied_into_the_message(fake_openai):
    # Some servers echo the request (key, prompt) into their error text.
    echo = f"bad request: key {API_KEY} prompt {PROMPT}"
    fake_openai.enqueue(Behaviour.error(400, code=f"invalid {API_KEY}", message=echo))
    with pytest.raises(BackendHTTPError) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert info.value.code == "fake_error"  # the identifier-like "type", not the bad "code"
    assert_secret_free(info.value)


def test_redirect_is_not_followed(fake_openai):
    fake_openai.enqueue(Behaviour(status=307, headers=(("Location", "http://example.com/"),)))
    with pytest.raises(BackendHTTPError) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert info.value.status == 307
    assert len(fake_openai.requests) == 1


def test_http_error_pickles_for_celery():
    exc = BackendHTTPError(503, code="overloaded")
    clone = pickle.loads(pickle.dumps(exc))  # noqa: S301  (our own bytes)
    assert (type(clone), clone.status, clone.code, str(clone)) == (
        BackendHTTPError,
        503,
        "overloaded",
        str(exc),
    )


# --- timeouts and connections --------------------------------------------------------------


def test_slow_server_twice_is_a_timeout_after_two_requests(fake_openai):
    """Event-based, no clock: the server would answer each request only after 10 minutes
    (its delay is cut short when the fixture stops it), so a BackendTimeout after exactly two
    recorded requests proves both attempts gave up on their own timeout without an answer.
    The durations themselves are measured in bench/bench_backend_timeout.py."""
    fake_openai.enqueue(Behaviour.sleep(600.0), Behaviour.sleep(600.0))
    backend = make_backend(fake_openai, timeout=0.3)
    with pytest.raises(BackendTimeout) as info:
        backend.generate(PROMPT, TURNS)
    assert len(fake_openai.requests) == 2
    assert fake_openai.pending == 0  # both slow behaviours were consumed, no third attempt
    assert_secret_free(info.value)


def test_slow_then_fast_succeeds(fake_openai):
    fake_openai.enqueue(Behaviour.sleep(2.0), Behaviour.reply(REPLY))
    assert make_backend(fake_openai, timeout=0.3).generate(PROMPT, TURNS) == REPLY
    assert len(fake_openai.requests) == 2


def test_connection_refused_is_unavailable():
    backend = OpenAIBackend(
        "gpt-test", f"http://127.0.0.1:{closed_port()}/v1", API_KEY, retry_backoff=0.0
    )
    with pytest.raises(BackendUnavailable) as info:
        backend.generate(PROMPT, TURNS)
    assert "cannot connect" in str(info.value)
    assert_secret_free(info.value)


def test_dropped_connection_is_unavailable_after_one_retry(fake_openai):
    fake_openai.enqueue(Behaviour.close(), Behaviour.close())
    with pytest.raises(BackendUnavailable) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert len(fake_openai.requests) == 2
    assert_secret_free(info.value)


def test_dropped_then_ok_succeeds(fake_openai):
    fake_openai.enqueue(Behaviour.close(), Behaviour.reply(REPLY))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == REPLY
    assert len(fake_openai.requests) == 2


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


# --- secrets -------------------------------------------------------------------------------


def test_repr_hides_the_key(fake_openai):
    backend = make_backend(fake_openai)
    assert API_KEY not in repr(backend)
    assert "api_key=set" in repr(backend)


def test_no_error_class_leaks_the_key_or_prompt(fake_openai):
    fake_openai.enqueue(
        Behaviour.raw(b"nope"),
        Behaviour.error(418),
        Behaviour.close(),
        Behaviour.close(),
        Behaviour.sleep(1.0),
        Behaviour.sleep(1.0),
    )
    backend = make_backend(fake_openai, timeout=0.3)
    raised: list[BackendError] = []
    for _ in range(4):
        with pytest.raises(BackendError) as info:
            backend.generate(PROMPT, TURNS)
        raised.append(info.value)
    assert [type(e) for e in raised] == [
        BackendBadReply,
        BackendHTTPError,
        BackendUnavailable,
        BackendTimeout,
    ]
    for exc in raised:
        assert_secret_free(exc)


# --- construction --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        "",
        "127.0.0.1:11434/v1",
        "ftp://127.0.0.1/v1",
        f"http://user:{API_KEY}@127.0.0.1:11434/v1",
        f"http://127.0.0.1:11434/v1?key={API_KEY}",
    ],
)
def test_bad_base_url_is_rejected_without_echoing_it(base_url):
    with pytest.raises(ValueError, match="base URL") as info:
        OpenAIBackend("gpt-test", base_url, API_KEY)
    assert API_KEY not in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": "  "},
        {"timeout": 0},
        {"timeout": float("inf")},
        {"max_tokens": 0},
        {"max_tokens": 1.5},
        {"retry_backoff": -1.0},
    ],
)
def test_bad_settings_are_rejected(kwargs):
    args = {"model": "gpt-test", "base_url": "http://127.0.0.1:1/v1", "api_key": None} | kwargs
    with pytest.raises(ValueError):
        OpenAIBackend(**args)


# --- resolve_backend -----------------------------------------------------------------------


class StubHeuristic:
    name = "heuristic"

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        return "{}"


class Settings:
    """The settings an openai: backend reads, as django.conf.settings would hold them."""

    def __init__(self, base_url: str | None = "http://127.0.0.1:11434/v1") -> None:
        self.KIROCREW_OPENAI_BASE_URL = base_url
        self.KIROCREW_OPENAI_API_KEY = API_KEY
        self.KIROCREW_OPENAI_TIMEOUT = 12.5
        self.KIROCREW_OPENAI_MAX_TOKENS = 777


def resolve(
    spec: str,
    *,
    base_url: str | None = "http://127.0.0.1:11434/v1",
    heuristic_factory: Callable[[], SummaryBackend] | None = None,
) -> SummaryBackend:
    registry = dict(BACKENDS)
    if heuristic_factory is not None:
        registry["heuristic"] = lambda rest, settings: heuristic_factory()
    return resolve_backend(spec, Settings(base_url), registry=registry)


def test_resolve_heuristic_uses_the_factory():
    stub = StubHeuristic()
    assert resolve("heuristic", heuristic_factory=lambda: stub) is stub
    assert resolve(" heuristic\n", heuristic_factory=lambda: stub) is stub


def test_the_registry_resolves_each_prefix():
    from summaries.core.heuristic import HeuristicBackend

    assert set(BACKENDS) == {"heuristic", "openai:"}
    assert isinstance(resolve("heuristic"), HeuristicBackend)
    assert isinstance(resolve("openai:m"), OpenAIBackend)


def test_a_new_registration_is_picked_up(monkeypatch):
    """Adding a backend is one factory and one registration line: nothing else changes."""
    monkeypatch.setattr("summaries.core.backends.BACKENDS", dict(BACKENDS))
    from summaries.core import backends

    seen: list[tuple[str, object]] = []

    def stub_factory(rest: str, settings: object) -> SummaryBackend:
        seen.append((rest, settings))
        return StubHeuristic()

    register_backend("stub:", stub_factory)
    settings = Settings()
    assert isinstance(backends.resolve_backend(" stub:tiny-model ", settings), StubHeuristic)
    assert seen == [("tiny-model", settings)]
    with pytest.raises(ValueError, match=re.escape("'stub:<...>'")):  # listed too
        backends.resolve_backend("nope", settings)
    # exact names match exactly; only a prefix ending in ":" takes a rest
    register_backend("plain", stub_factory)
    assert isinstance(backends.resolve_backend("plain", settings), StubHeuristic)
    with pytest.raises(ValueError, match="unknown KIROCREW_SUMMARY_MODEL"):
        backends.resolve_backend("plainer", settings)
    with pytest.raises(ValueError, match="non-empty word"):
        register_backend(" spaced", stub_factory)


def test_resolve_openai_builds_the_configured_backend():
    def no_heuristic() -> SummaryBackend:
        raise AssertionError("the heuristic must not be built for an openai: spec")

    backend = resolve("openai:gpt-4o-mini", heuristic_factory=no_heuristic)
    assert isinstance(backend, OpenAIBackend)
    assert backend.name == "openai:gpt-4o-mini"
    assert backend.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert (backend.timeout, backend.max_tokens) == (12.5, 777)


def test_resolve_openai_model_with_colons_and_tags():
    backend = resolve(" openai: llama3.1:8b ")
    assert backend.name == "openai:llama3.1:8b"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("", "unknown"),
        ("openai", "unknown"),
        ("gpt-4o-mini", "unknown"),
        ("Heuristic", "unknown"),
        ("anthropic:claude", "unknown"),
        ("openai:", "needs a model name"),
        ("openai:   ", "needs a model name"),
    ],
)
def test_resolve_rejects_unknown_specs(spec, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        resolve(spec)
    assert API_KEY not in str(info.value)


@pytest.mark.parametrize("base_url", [None, "", "  "])
def test_resolve_openai_needs_a_base_url(base_url):
    with pytest.raises(ValueError, match="KIROCREW_OPENAI_BASE_URL"):
        resolve("openai:gpt-4o-mini", base_url=base_url)
