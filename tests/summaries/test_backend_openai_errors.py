"""OpenAIBackend against a real chat-completions server on loopback: retries, HTTP errors,
timeouts and dropped or refused connections."""

from __future__ import annotations

import pickle
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from summaries.core.backends import (
    BackendHTTPError,
    BackendTimeout,
    BackendUnavailable,
    OpenAIBackend,
)
from tests.summaries.fake_openai_server import Behaviour, closed_port
from tests.summaries.openai_backend_helpers import (
    API_KEY,
    PROMPT,
    REPLY,
    TURNS,
    assert_secret_free,
    make_backend,
)

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


def test_a_timed_out_generation_is_not_asked_again(fake_openai):
    """Event-based, no clock: the server would answer only after 10 minutes (its delay is
    cut short when the fixture stops it). A timed-out request may still be generating on the
    server; a second one would queue behind it on a single-slot server, so there is none."""
    fake_openai.enqueue(Behaviour.sleep(600.0), Behaviour.reply(REPLY))
    backend = make_backend(fake_openai, timeout=0.3)
    with pytest.raises(BackendTimeout) as info:
        backend.generate(PROMPT, TURNS)
    assert len(fake_openai.requests) == 1
    assert fake_openai.pending == 1  # the second behaviour was never asked for
    assert_secret_free(info.value)


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


def test_a_server_killed_mid_request_is_unavailable_not_a_wait_for_the_timeout(fake_openai):
    """The server process dies (SIGKILL) while the client waits on a reply it would have
    waited 300 s for: the closed socket ends the wait, and the one retry finds the port
    dead. Unavailable, so the pass tries again later."""
    fake_openai.enqueue(Behaviour.sleep(600.0))
    backend = make_backend(fake_openai, timeout=300.0)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(backend.generate, PROMPT, TURNS)
        while not fake_openai.requests:
            time.sleep(0.02)
        fake_openai.kill()
        with pytest.raises(BackendUnavailable) as info:
            waiting.result(timeout=60)  # a bound for a broken test, not a measurement
    assert_secret_free(info.value)


def test_dropped_then_ok_succeeds(fake_openai):
    fake_openai.enqueue(Behaviour.close(), Behaviour.reply(REPLY))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == REPLY
    assert len(fake_openai.requests) == 2
