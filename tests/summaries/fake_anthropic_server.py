"""The loopback scripted server (``fake_openai_server``) speaking Anthropic's Messages API.

Replies and errors in the documented shapes: a ``message`` object whose ``content`` is a
list of blocks and whose ``stop_reason`` says why it stopped; errors as
``{"type": "error", "error": {"type": ..., "message": ...}}`` with ``retry-after`` on 429
and 529. What the real API refuses before generating is :class:`AnthropicRules`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.fakes.behaviour import AnthropicRules, messages_error
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

__all__ = ["AnthropicRules", "fake_anthropic", "generate", "message", "messages_error"]


def message(
    text: str, *, stop_reason: str = "end_turn", delay: float = 0.0, blocks: list[Any] | None = None
) -> Behaviour:
    payload = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": blocks if blocks is not None else [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    base = Behaviour.json(payload, delay=delay)
    # Asked to stream, the server sends the same text as Messages API events.
    return replace(
        base,
        content=text if blocks is None else None,
        finish_reason=stop_reason,
        dialect="anthropic",
    )


def generate(text: str, *, token_delay: float, stop_reason: str = "end_turn") -> Behaviour:
    """A message generated token by token (see ``Behaviour.generate``)."""
    return replace(message(text, stop_reason=stop_reason), token_delay=token_delay)


@pytest.fixture
def fake_anthropic(fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    """A started loopback server with the Messages API's rules; its key is ``KEY``."""
    fake_openai.profile = AnthropicRules(api_key=KEY)
    return fake_openai


KEY = "sk-ant-api03-TESTKEYdoNotLeak-abcdefghijklmnopqrstuvwxyz0123456789"
