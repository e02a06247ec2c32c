"""Reading an OpenAI chat-completions answer: a server-sent-events stream of deltas, or
(from a server that ignores ``stream``) one JSON completion. Bounded, typed errors only."""

from __future__ import annotations

import json

import httpx

from summaries.core.backends.base import (
    BackendBadReply,
    BackendEmptyStream,
    BackendUnavailable,
)
from summaries.core.backends.http import StreamedText, safe_code, stream_lines


def read_stream(
    response: httpx.Response, deadline: float, timeout: float
) -> tuple[str, str | None]:
    """The deltas of a server-sent-events stream, joined; and the finish reason.

    Bounded like a body: text past ``MAX_REPLY_TEXT_BYTES`` (or a stream past
    ``MAX_STREAM_BYTES``) is a runaway, and leaving (the caller's ``with``) closes the
    connection, which stops a real server's generation.
    """
    text = StreamedText()
    finish_reason: str | None = None
    done = False
    events = 0
    for line in stream_lines(response, deadline, timeout):
        event = _stream_event(line)
        if event is None:
            continue
        events += 1
        if isinstance(event, str):  # "done"
            done = True
            break
        delta, reason = event
        text.add(delta)
        finish_reason = reason or finish_reason
    if not done and finish_reason is None:
        if not events:
            raise BackendEmptyStream("model server ended the reply stream before any event")
        raise BackendUnavailable("model server ended the reply stream before it was complete")
    content = text.text()
    if not content.strip():
        raise BackendBadReply("reply stream content is empty")
    return content, finish_reason


def _stream_event(line: bytes) -> tuple[str, str | None] | str | None:
    """One SSE line: ``"done"``, (delta text, finish reason), or None for anything else
    (blank lines, comments, other fields)."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return None
    data = line[5:].strip()
    if data == b"[DONE]":
        return "done"
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise BackendBadReply("reply stream event is not JSON") from exc
    if not isinstance(payload, dict):
        raise BackendBadReply("reply stream event is not an object")
    if "error" in payload:
        error = payload["error"]
        code = (
            safe_code(error.get("code") or error.get("type")) if isinstance(error, dict) else None
        )
        raise BackendBadReply(f"reply stream carried an error ({code or 'no code'})")
    choices = payload.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        return None  # usage-only chunks and the like
    delta = choice.get("delta")
    text = delta.get("content") if isinstance(delta, dict) else None
    reason = choice.get("finish_reason")
    return (text if isinstance(text, str) else "", reason if isinstance(reason, str) else None)


def extract_content(raw: bytes) -> tuple[str, str | None]:
    try:
        payload = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise BackendBadReply("reply body is not JSON") from exc
    if not isinstance(payload, dict):
        raise BackendBadReply(f"reply JSON is a {type(payload).__name__}, not an object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BackendBadReply("reply JSON has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise BackendBadReply("reply choices[0] has no message object")
    content = message.get("content")
    if not isinstance(content, str):
        raise BackendBadReply(
            f"reply choices[0].message.content is {type(content).__name__}, not a string"
        )
    if not content.strip():
        raise BackendBadReply("reply choices[0].message.content is empty")
    finish_reason = choice.get("finish_reason")
    return content, finish_reason if isinstance(finish_reason, str) else None
