"""What the loopback model server does with a request: scripted :class:`Behaviour`s,
and a profile of what a real server refuses before it generates anything (llama.cpp's
habits in :class:`ServerProfile`, the Messages API's in :class:`AnthropicRules`).

Shared by the server process (``tests.fakes.model_server``) and the test that scripts it
(``tests.summaries.fake_openai_server``): both sides speak the JSON of :func:`to_wire`.
Standard library only, so the server process starts fast.
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Behaviour:
    """What the server does with one request. Build with the classmethods."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0  # seconds to wait before answering (or dropping)
    drop: bool = False  # close the connection without sending any response
    chunked: bool = False  # send the body with chunked encoding, no Content-Length
    headers: tuple[tuple[str, str], ...] = ()
    # A generated reply: its message content (a request with ``stream: true`` gets it as
    # server-sent events, as a real server sends it), its finish reason, and the seconds
    # each "token" (4 characters) takes to generate.
    content: str | None = None
    finish_reason: str = "stop"
    token_delay: float = 0.0
    dialect: str = "openai"  # whose stream format: "openai" or "anthropic"
    # Held until the test releases it (``FakeOpenAIServer.release``): which pass reaches
    # the model next is then a matter of order, not timing.
    hold: bool = False
    # Relayed to a real server at this base (``http://host:port``), its answer streamed
    # back as it comes: the fake then records what a client sent a real model.
    forward: str | None = None

    @classmethod
    def reply(
        cls,
        content: str,
        *,
        finish_reason: str = "stop",
        model: str = "fake-model",
        delay: float = 0.0,
        chunked: bool = False,
    ) -> Behaviour:
        """A well-formed 200 chat completion whose message content is ``content``."""
        payload = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        base = cls.json(payload, delay=delay, chunked=chunked)
        return replace(base, content=content, finish_reason=finish_reason)

    @classmethod
    def generate(
        cls, content: str, *, token_delay: float, finish_reason: str = "stop"
    ) -> Behaviour:
        """A reply generated token by token (4 characters each, ``token_delay`` s apart).
        Streamed, the server stops when the client has gone (as llama.cpp and vLLM do);
        not streamed, it generates to the end and only then finds nobody waiting."""
        return replace(cls.reply(content, finish_reason=finish_reason), token_delay=token_delay)

    @classmethod
    def json(
        cls, payload: Any, *, status: int = 200, delay: float = 0.0, chunked: bool = False
    ) -> Behaviour:
        """Any JSON value as the body: for replies with a wrong shape."""
        return cls(status=status, body=json.dumps(payload).encode(), delay=delay, chunked=chunked)

    @classmethod
    def raw(
        cls,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = "application/json",
        delay: float = 0.0,
        chunked: bool = False,
    ) -> Behaviour:
        """Exact body bytes: for malformed or oversize replies."""
        return cls(
            status=status, body=body, content_type=content_type, delay=delay, chunked=chunked
        )

    @classmethod
    def error(
        cls,
        status: int,
        *,
        code: str | None = None,
        message: str = "fake error",
        delay: float = 0.0,
    ) -> Behaviour:
        """An OpenAI-style error body with the given status."""
        error: dict[str, Any] = {"message": message, "type": "fake_error", "code": code}
        return cls.json({"error": error}, status=status, delay=delay)

    @classmethod
    def sleep(cls, seconds: float, then: Behaviour | None = None) -> Behaviour:
        """Wait ``seconds`` before answering (with ``then``, by default a reply)."""
        base = then if then is not None else cls.reply('{"intents": []}')
        return replace(base, delay=seconds)

    @classmethod
    def close(cls, *, delay: float = 0.0) -> Behaviour:
        """Read the request, then close the connection without answering."""
        return cls(drop=True, delay=delay)

    @classmethod
    def forward_to(cls, upstream: str) -> Behaviour:
        """Relay the request to the real server at ``upstream`` (scheme, host, port)."""
        return cls(forward=upstream.rstrip("/"))

    @classmethod
    def held(cls, then: Behaviour) -> Behaviour:
        """``then``, once the test has released this request (requests are released in the
        order they arrived)."""
        return replace(then, hold=True)

    def to_wire(self) -> dict[str, Any]:
        wire = asdict(self)
        wire["body"] = base64.b64encode(self.body).decode()
        return wire

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Behaviour:
        return cls(
            **{
                **wire,
                "body": base64.b64decode(wire["body"]),
                "headers": tuple((str(k), str(v)) for k, v in wire["headers"]),
            }
        )


@dataclass(frozen=True)
class Generation:
    """One generated reply, recorded when the server stopped working on it."""

    tokens: int  # how many it was asked to generate
    generated: int  # how many it did before it stopped
    client_left: bool  # a write found the client gone

    @property
    def stopped_early(self) -> bool:
        return self.generated < self.tokens


@dataclass(frozen=True)
class ServerProfile:
    """How a real server treats a request before it generates anything.

    ``json_schema_500``: ``response_format: json_schema`` fails with an HTTP 500 naming
    the field (llama_cpp.server); ``context_chars``: a prompt longer than this is refused
    with 400 ``context_length_exceeded`` (its message and code as llama_cpp.server sends
    them); ``single_slot``: one generation at a time, later requests wait for the slot;
    ``empty_stream_overflow``: an over-long prompt asked to stream gets a 200 event stream
    that ends before its first event (llama_cpp.server 0.3.36; unstreamed it gets the 400).
    """

    json_schema_500: bool = False
    context_chars: int | None = None
    single_slot: bool = False
    empty_stream_overflow: bool = False

    def refusal(self, request: Any, headers: dict[str, str]) -> Behaviour | None:
        body = request if isinstance(request, dict) else {}
        fmt = body.get("response_format")
        if self.json_schema_500 and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return Behaviour.json(
                {
                    "error": {
                        "message": "Unsupported response_format type: json_schema",
                        "type": "internal_server_error",
                    }
                },
                status=500,
            )
        messages = body.get("messages")
        prompt = (
            "".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
            if isinstance(messages, list)
            else ""
        )
        if self.context_chars is not None and len(prompt) > self.context_chars:
            if self.empty_stream_overflow and body.get("stream") is True:
                return Behaviour(status=200, content_type="text/event-stream")
            error = {
                "message": f"This model's maximum context length is {self.context_chars // 4} "
                f"tokens. However, you requested {len(prompt) // 4} tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
            return Behaviour.json({"error": error}, status=400)
        return None


#: A local llama.cpp server (llama_cpp.server) as a real one behaves.
LLAMA_CPP = ServerProfile(json_schema_500=True, single_slot=True, empty_stream_overflow=True)


def messages_error(
    status: int, kind: str, *, message_text: str = "fake error", retry_after: str | None = None
) -> Behaviour:
    """An error as Anthropic's Messages API sends it (``retry-after`` on 429 and 529)."""
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
    """What the Messages API refuses before generating: a request without ``x-api-key``
    (401 ``authentication_error``), without ``anthropic-version`` or ``max_tokens`` (400
    ``invalid_request_error``), and a prompt over its context window (400 "prompt is too
    long")."""

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


Profile = ServerProfile | AnthropicRules
_PROFILES: dict[str, type[ServerProfile] | type[AnthropicRules]] = {
    "server": ServerProfile,
    "anthropic": AnthropicRules,
}


def profile_to_wire(profile: Profile) -> dict[str, Any]:
    kind = next(k for k, cls in _PROFILES.items() if isinstance(profile, cls))
    return {"kind": kind, **asdict(profile)}


def profile_from_wire(wire: dict[str, Any]) -> Profile:
    cls = _PROFILES[wire["kind"]]
    return cls(**{f.name: wire[f.name] for f in fields(cls) if f.name in wire})


# --- how a generated reply is streamed, per API ---

Event = tuple[str | None, Any]


def _openai_stream(finish: str) -> tuple[list[Event], Any, list[Event]]:
    def chunk(delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
        }

    return (
        [(None, chunk({"role": "assistant"}, None))],
        lambda token: (None, chunk({"content": token}, None)),
        [(None, chunk({}, finish)), (None, b"[DONE]")],
    )


def _anthropic_stream(stop: str) -> tuple[list[Event], Any, list[Event]]:
    start: dict[str, Any] = {
        "type": "message",
        "id": "msg_fake",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 1, "output_tokens": 0},
    }
    return (
        [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            ("ping", {"type": "ping"}),
        ],
        lambda token: (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": token},
            },
        ),
        [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop},
                    "usage": {"output_tokens": 1},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ],
    )


DIALECTS = {"openai": _openai_stream, "anthropic": _anthropic_stream}


def tokens_of(content: str) -> list[str]:
    return [content[i : i + 4] for i in range(0, len(content), 4)] or [""]
