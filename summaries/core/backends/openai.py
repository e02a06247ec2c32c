"""Summarizer backend that speaks the OpenAI chat-completions protocol over httpx.

Works with api.openai.com and with local OpenAI-compatible servers (Ollama, llama.cpp's
``llama_cpp.server``, vLLM) at e.g. ``http://127.0.0.1:11434/v1``.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Sequence
from enum import Enum
from typing import Any, Final, Protocol

import httpx

from summaries.core.backends.base import (
    BackendBadReply,
    BackendContextOverflow,
    BackendError,
    BackendHTTPError,
    BackendRunaway,
    BackendUnavailable,
)
from summaries.core.backends.http import (
    MAX_REPLY_BYTES,
    check_max_tokens,
    check_timeout,
    endpoint_url,
    http_client,
    names_overflow,
    read_capped,
    read_error_body,
    safe_code,
    transport_errors,
)
from summaries.core.intents import reply_json_schema
from summaries.core.transcript_turn import TranscriptTurn

__all__ = [
    "JSON_OBJECT_FORMAT",
    "MAX_REPLY_BYTES",
    "RESPONSE_FORMAT",
    "SYSTEM_LINE",
    "OpenAIBackend",
    "OutputFormat",
    "format_memory_clear",
    "openai_backend",
]

log = logging.getLogger(__name__)

DEFAULT_RETRY_BACKOFF: Final = 0.5
#: Attempts per ``generate`` call: the first plus exactly one retry (format step-downs
#: are not attempts: they are bounded by the ladder's length).
ATTEMPTS: Final = 2

SYSTEM_LINE: Final = (
    "You summarize chat transcripts by intent. Reply with one JSON object and nothing else."
)

#: The reply's shape, derived from the payload model (summaries/core/intents.py): sent as
#: ``response_format`` so a server that supports structured output keeps to it. Not
#: ``strict``: the normalizer already copes with anything, and strict mode would refuse
#: the schema's optional fields on api.openai.com.
RESPONSE_FORMAT: Final = {
    "type": "json_schema",
    "json_schema": {"name": "intent_summary", "schema": reply_json_schema(), "strict": False},
}
#: llama.cpp's form: a JSON object constrained by the same schema (its grammar honours it).
JSON_OBJECT_SCHEMA_FORMAT: Final = {"type": "json_object", "schema": reply_json_schema()}
#: The last resort: any JSON object.
JSON_OBJECT_FORMAT: Final = {"type": "json_object"}


class OutputFormat(Enum):
    """The ``response_format`` ladder, most structured first. A server that refuses one
    (naming it) gets the next; the step is remembered per (URL, model) for the process."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object+schema"
    JSON_OBJECT = "json_object"

    @property
    def body(self) -> dict[str, Any]:
        return _FORMAT_BODIES[self]

    @property
    def fallback(self) -> OutputFormat | None:
        ladder = list(OutputFormat)
        index = ladder.index(self)
        return ladder[index + 1] if index + 1 < len(ladder) else None


_FORMAT_BODIES: Final[dict[OutputFormat, dict[str, Any]]] = {
    OutputFormat.JSON_SCHEMA: RESPONSE_FORMAT,
    OutputFormat.JSON_OBJECT_SCHEMA: JSON_OBJECT_SCHEMA_FORMAT,
    OutputFormat.JSON_OBJECT: JSON_OBJECT_FORMAT,
}
#: A refusal of the output format: 400/422 from servers that validate the field, 500 from
#: llama_cpp.server, which fails while building the grammar. Only with the field named in
#: the body: 401/403/404 and other 4xx/5xx are not cured by another format.
_FORMAT_REFUSALS: Final = frozenset({400, 422, 500})
_FORMAT_NAMES: Final = re.compile(rb"response_format|json_schema", re.IGNORECASE)

# Which format each (chat completions URL, model) accepts, learned from refusals. Process
# memory: a restarted worker asks once more (one refused request), and a server upgraded
# to support structured output gets it back then.
_format_memory: dict[tuple[str, str], OutputFormat] = {}
_format_lock = threading.Lock()


def format_memory_clear() -> None:
    """Forget every learned format (tests; a process restart does the same)."""
    with _format_lock:
        _format_memory.clear()


class OpenAISettings(Protocol):
    """The settings this backend reads (declared in kirocrew_site/settings.py)."""

    KIROCREW_OPENAI_BASE_URL: str
    KIROCREW_OPENAI_API_KEY: str
    KIROCREW_OPENAI_TIMEOUT: float
    KIROCREW_OPENAI_MAX_TOKENS: int


class OpenAIBackend:
    """Chat-completions client for the background summarizer role.

    One ``generate`` call is one streamed ``POST {base_url}/chat/completions``
    (``stream: true``, ``temperature`` 0, the learned ``response_format``) whose deltas
    are joined into the reply text, returned unparsed. A server that ignores ``stream``
    and answers one JSON completion is read as such. ``turns`` is ignored: the prompt
    already contains the rendered transcript.

    Streamed so that giving up ends the work: a real server (llama.cpp, vLLM) stops
    generating when the client closes the connection, whereas a non-streamed request
    abandoned at the timeout kept a single-slot server generating for minutes for nobody.

    Retry policy: at most one retry (two attempts), after ``retry_backoff`` seconds, only
    when the request cannot have left a generation behind or paid for one: a refused or
    dropped connection, or an HTTP 5xx. A timeout is NOT retried (the server was still
    generating; asking again doubles the queue on a single-slot server), nor a 4xx
    (the same request gets the same answer), nor a 2xx with an unusable body (the model
    already ran). A reply cut at ``max_tokens`` is :class:`BackendRunaway`; a prompt over
    the context window :class:`BackendContextOverflow` (the pass shrinks it). There is
    never a fallback to another model.

    Timeouts: ``timeout`` bounds each read (the wait for the next token) and each
    attempt's wall-clock time, checked between chunks; connecting is capped at
    ``MAX_CONNECT_TIMEOUT``.

    Thread safety: each call builds and closes its own ``httpx.Client``; the instance
    holds only configuration, and the format memory is module-level and locked.

    The API key is sent only as ``Authorization: Bearer`` and only when non-empty; it
    never appears in ``repr`` or in exception messages.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None,
        timeout: float = 60.0,
        max_tokens: int = 2000,
        transport: httpx.BaseTransport | None = None,
        *,
        retry_backoff: float = DEFAULT_RETRY_BACKOFF,
    ) -> None:
        model = model.strip()
        if not model:
            raise ValueError("OpenAIBackend needs a model name")
        if not (math.isfinite(retry_backoff) and retry_backoff >= 0):
            raise ValueError(f"retry_backoff must be >= 0 seconds, got {retry_backoff!r}")
        self.name = f"openai:{model}"
        self.model = model
        # Validated to carry no userinfo, query or fragment: safe in logs and messages.
        self.url = endpoint_url(base_url, "/chat/completions", setting="the OpenAI base URL")
        self.timeout = check_timeout(timeout)
        self.max_tokens = check_max_tokens(max_tokens)
        self.retry_backoff = float(retry_backoff)
        self._transport = transport
        # A key copied from an env file often carries a trailing newline, which httpx
        # would reject as an illegal header value; blank means "no key".
        self._api_key = (api_key or "").strip()

    def __repr__(self) -> str:
        # Spelled out so the key can never reach a log through repr().
        return (
            f"OpenAIBackend(model={self.model!r}, url={self.url!r}, timeout={self.timeout}, "
            f"max_tokens={self.max_tokens}, api_key={'set' if self._api_key else 'unset'})"
        )

    @property
    def output_format(self) -> OutputFormat:
        with _format_lock:
            return _format_memory.get((self.url, self.model), OutputFormat.JSON_SCHEMA)

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        headers = {
            "Accept": "text/event-stream, application/json",
            # An unencoded body, so the size cap counts what the server really sends.
            "Accept-Encoding": "identity",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        fmt = self.output_format
        client = http_client(self.timeout, self._transport)
        try:
            attempt = 1
            while True:
                try:
                    return self._attempt(client, self._body(prompt, fmt), headers)
                except BackendError as exc:
                    lower = self._format_refused(exc, fmt)
                    if lower is not None:
                        fmt = lower
                        continue
                    if attempt >= ATTEMPTS or not _is_transient(exc):
                        raise
                    log.info(
                        "summary backend %s: attempt %d failed (%s: %s); retrying in %.1f s",
                        self.name,
                        attempt,
                        type(exc).__name__,
                        exc,
                        self.retry_backoff,
                    )
                    attempt += 1
                    time.sleep(self.retry_backoff)
        finally:
            # A caller-owned transport outlives this call; closing the client would close it.
            if self._transport is None:
                client.close()

    def _body(self, prompt: str, fmt: OutputFormat) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_LINE},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "stream": True,
            "response_format": fmt.body,
        }

    def _format_refused(self, exc: BackendError, fmt: OutputFormat) -> OutputFormat | None:
        """The next format down the ladder when the server refused ``fmt`` (and remember
        it for this URL and model), else None."""
        if not (
            isinstance(exc, BackendHTTPError)
            and not isinstance(exc, BackendContextOverflow)
            and exc.status in _FORMAT_REFUSALS
            and exc.about_format
        ):
            return None
        lower = fmt.fallback
        if lower is None:
            return None
        log.warning(
            "summary backend %s: server refused response_format %s (HTTP %d); "
            "asking for %s from now on",
            self.name,
            fmt.value,
            exc.status,
            lower.value,
        )
        with _format_lock:
            _format_memory[(self.url, self.model)] = lower
        return lower

    def _attempt(self, client: httpx.Client, body: dict[str, Any], headers: dict[str, str]) -> str:
        deadline = time.monotonic() + self.timeout
        with (
            transport_errors(self.url, self.timeout),
            client.stream("POST", self.url, json=body, headers=headers) as response,
        ):
            if not response.is_success:
                raise _http_error(response)
            if "text/event-stream" in response.headers.get("content-type", ""):
                content, finish_reason = _read_stream(response, deadline, self.timeout)
            else:
                raw = read_capped(response, MAX_REPLY_BYTES, deadline, self.timeout)
                content, finish_reason = _extract_content(raw)
        if finish_reason == "length":
            raise BackendRunaway(f"reply cut off at max_tokens={self.max_tokens}")
        return content


def openai_backend(model: str, settings: OpenAISettings) -> OpenAIBackend:
    """The registry's factory for ``openai:<model>``: the model from the spec, the rest
    from :class:`OpenAISettings`."""
    model = model.strip()
    if not model:
        raise ValueError(
            "KIROCREW_SUMMARY_MODEL 'openai:' needs a model name, e.g. 'openai:gpt-4o-mini'"
        )
    base_url = settings.KIROCREW_OPENAI_BASE_URL
    if not (base_url or "").strip():
        raise ValueError(
            f"KIROCREW_SUMMARY_MODEL 'openai:{model}' needs KIROCREW_OPENAI_BASE_URL, "
            "e.g. http://127.0.0.1:11434/v1"
        )
    return OpenAIBackend(
        model,
        base_url,
        settings.KIROCREW_OPENAI_API_KEY,
        timeout=settings.KIROCREW_OPENAI_TIMEOUT,
        max_tokens=settings.KIROCREW_OPENAI_MAX_TOKENS,
    )


def _is_transient(exc: BackendError) -> bool:
    if isinstance(exc, BackendUnavailable):
        return True
    return (
        isinstance(exc, BackendHTTPError)
        and not isinstance(exc, BackendContextOverflow)
        and exc.status >= 500
    )


def _http_error(response: httpx.Response) -> BackendHTTPError:
    """The typed error for a non-success answer.

    OpenAI sends ``{"error": {"message", "type", "code", "param"}}``; compatible servers
    vary. Only identifier-like codes are kept; the message is read for the format and
    overflow words alone, never copied.
    """
    raw, payload = read_error_body(response)
    error = payload.get("error") if isinstance(payload, dict) else None
    code = None
    if isinstance(error, dict):
        code = safe_code(error.get("code")) or safe_code(error.get("type"))
    status = response.status_code
    if code == "context_length_exceeded" or (status in (400, 413, 422) and names_overflow(raw)):
        return BackendContextOverflow(status, code=code or "context_length_exceeded")
    return BackendHTTPError(status, code=code, about_format=_FORMAT_NAMES.search(raw) is not None)


def _read_stream(
    response: httpx.Response, deadline: float, timeout: float
) -> tuple[str, str | None]:
    """The deltas of a server-sent-events stream, joined; and the finish reason.

    Bounded like a body: past ``MAX_REPLY_BYTES`` it is a runaway, and leaving (the
    caller's ``with``) closes the connection, which stops a real server's generation.
    """
    parts: list[str] = []
    finish_reason: str | None = None
    size = 0
    pending = b""
    done = False
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise BackendRunaway(f"reply stream exceeds the {MAX_REPLY_BYTES}-byte cap")
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout(f"reply still streaming after {timeout:g} s")
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            event = _stream_event(line)
            if event is None:
                continue
            if isinstance(event, str):  # "done"
                done = True
                break
            text, reason = event
            parts.append(text)
            finish_reason = reason or finish_reason
        if done:
            break
    if not done and finish_reason is None:
        raise BackendUnavailable("model server ended the reply stream before it was complete")
    content = "".join(parts)
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


def _extract_content(raw: bytes) -> tuple[str, str | None]:
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
