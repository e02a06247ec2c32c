"""The key, prompt, reply and backend factory the OpenAIBackend tests share."""

from __future__ import annotations

import traceback
from collections.abc import Sequence

from summaries.core.backends import OpenAIBackend
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries.fake_openai_server import FakeOpenAIServer

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
