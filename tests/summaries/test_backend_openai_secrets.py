"""OpenAIBackend never shows its key or the prompt (repr, errors, tracebacks), and rejects
bad construction settings without echoing them."""

from __future__ import annotations

import pytest

from summaries.core.backends import (
    BackendBadReply,
    BackendError,
    BackendHTTPError,
    BackendTimeout,
    BackendUnavailable,
    OpenAIBackend,
)
from tests.summaries.fake_openai_server import Behaviour
from tests.summaries.openai_backend_helpers import (
    API_KEY,
    PROMPT,
    TURNS,
    assert_secret_free,
    make_backend,
)

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
