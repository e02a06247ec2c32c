"""The loopback scripted server (``fake_openai_server``) speaking Anthropic's Messages API.

Replies and errors in the documented shapes: a ``message`` object whose ``content`` is a
list of blocks and whose ``stop_reason`` says why it stopped; errors as
``{"type": "error", "error": {"type": ..., "message": ...}}`` with ``retry-after`` on 429
and 529. Like the real API it refuses a request without ``x-api-key`` (401
``authentication_error``), without ``anthropic-version`` or ``max_tokens`` (400
``invalid_request_error``), and a prompt over its context window (400 "prompt is too
long").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

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


def messages_error(
    status: int, kind: str, *, message_text: str = "fake error", retry_after: str | None = None
) -> Behaviour:
    body = json.dumps(
        {
            "type": "error",
            "error": {"type": kind, "message": message_text},
            "request_id": "req_fake",
        }
    ).encode()
    headers = (("retry-after", retry_after),) if retry_after is not None else ()
    return Behaviour(status=status, body=body, headers=headers)


@dataclass(frozen=True)
class AnthropicRules:
    """What the real API refuses before generating (a fake_openai_server profile)."""

    api_key: str
    context_chars: int | None = None

    def refusal(self, request: Any, headers: dict[str, str]) -> Behaviour | None:
        if headers.get("x-api-key") != self.api_key:
            return messages_error(401, "authentication_error", message_text="invalid x-api-key")
        if "anthropic-version" not in headers:
            return messages_error(
                400, "invalid_request_error", message_text="anthropic-version: header is required"
            )
        body = request if isinstance(request, dict) else {}
        if not isinstance(body.get("max_tokens"), int):
            return messages_error(
                400, "invalid_request_error", message_text="max_tokens: Field required"
            )
        prompt = json.dumps(body.get("messages", ""))
        if self.context_chars is not None and len(prompt) > self.context_chars:
            return messages_error(
                400,
                "invalid_request_error",
                message_text=f"prompt is too long: {len(prompt)} tokens > {self.context_chars} maximum",
            )
        return None


@pytest.fixture
def fake_anthropic() -> Iterator[FakeOpenAIServer]:
    """A started loopback server with the Messages API's rules; its key is ``KEY``."""
    with FakeOpenAIServer() as server:
        server.profile = AnthropicRules(api_key=KEY)
        yield server


KEY = "sk-ant-api03-TESTKEYdoNotLeak-abcdefghijklmnopqrstuvwxyz0123456789"
