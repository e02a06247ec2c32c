"""``openai:<model>``: the chat-completions protocol, for api.openai.com and compatible
local servers (Ollama, ``llama_cpp.server``, vLLM), with its ``response_format`` ladder."""

from __future__ import annotations

import logging
import re
import threading
from enum import Enum
from typing import Any, Final, Protocol

import httpx

from summaries.core.backends.base import (
    BackendBadReply,
    BackendContextOverflow,
    BackendEmptyStream,
    BackendError,
    BackendHTTPError,
    BackendUnavailable,
)
from summaries.core.backends.http import (
    OVERFLOW_WORDS,
    HTTPBackend,
    StreamedText,
    read_error_body,
    reply_json,
    safe_code,
    spec_model,
    sse_data,
)
from summaries.core.intents import reply_json_schema

log = logging.getLogger(__name__)

SYSTEM_LINE: Final = (
    "You summarize chat transcripts by intent. Reply with one JSON object and nothing else."
)
#: The reply's shape, sent so a server that supports structured output keeps to it. Not
#: ``strict``: the normalizer copes with anything, and strict mode would refuse the
#: schema's optional fields on api.openai.com.
RESPONSE_FORMAT: Final = {
    "type": "json_schema",
    "json_schema": {"name": "intent_summary", "schema": reply_json_schema(), "strict": False},
}
#: llama.cpp's form: a JSON object constrained by the same schema (its grammar honours it).
JSON_OBJECT_SCHEMA_FORMAT: Final = {"type": "json_object", "schema": reply_json_schema()}
JSON_OBJECT_FORMAT: Final = {"type": "json_object"}  # the last resort: any JSON object


class OutputFormat(Enum):
    """The ``response_format`` ladder, most structured first. A server that refuses one
    (naming it) gets the next; the step is remembered per (URL, model) for the process."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object+schema"
    JSON_OBJECT = "json_object"


#: Each format's body, and the next format down.
_LADDER: Final[dict[OutputFormat, tuple[dict[str, Any], OutputFormat | None]]] = {
    OutputFormat.JSON_SCHEMA: (RESPONSE_FORMAT, OutputFormat.JSON_OBJECT_SCHEMA),
    OutputFormat.JSON_OBJECT_SCHEMA: (JSON_OBJECT_SCHEMA_FORMAT, OutputFormat.JSON_OBJECT),
    OutputFormat.JSON_OBJECT: (JSON_OBJECT_FORMAT, None),
}
#: A refusal of the output format: 400/422 from servers that validate the field, 500 from
#: llama_cpp.server, which fails while building the grammar. Only with the field named in
#: the body: 401/403/404 and other 4xx/5xx are not cured by another format.
FORMAT_REFUSALS: Final = frozenset({400, 422, 500})
FORMAT_NAMES: Final = re.compile(rb"response_format|json_schema", re.IGNORECASE)

# Process memory: a restarted worker asks once more (one refused request), and a server
# upgraded to support structured output gets it back then.
_format_memory: dict[tuple[str, str], OutputFormat] = {}
_format_lock = threading.Lock()


class OpenAISettings(Protocol):
    KIROCREW_OPENAI_BASE_URL: str
    KIROCREW_OPENAI_API_KEY: str
    KIROCREW_OPENAI_TIMEOUT: float
    KIROCREW_OPENAI_MAX_TOKENS: int
    KIROCREW_OPENAI_RETRY_BACKOFF: float


class OpenAIBackend(HTTPBackend):
    """Streamed so that giving up ends the work: a server stops generating when the client
    closes the connection; a non-streamed request abandoned at the timeout kept a
    single-slot server generating for minutes for nobody. Retried once, only when no
    generation can be left behind or paid for: a refused or dropped connection, a 5xx.
    """

    KIND = "openai"
    ENDPOINT = "/chat/completions"
    URL_SETTING = "the OpenAI base URL"
    CUT_OFF = "length"

    @property
    def output_format(self) -> OutputFormat:
        with _format_lock:
            return _format_memory.get((self.url, self.model), OutputFormat.JSON_SCHEMA)

    def _request(self, prompt: str, *, stream: bool) -> tuple[dict[str, Any], dict[str, str]]:
        headers = {
            "Accept": "text/event-stream, application/json",
            # An unencoded body, so the size cap counts what the server really sends.
            "Accept-Encoding": "identity",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_LINE},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "stream": stream,
            "response_format": _LADDER[self.output_format][0],
        }
        return body, headers

    def _read_stream(self, response: httpx.Response, deadline: float) -> tuple[str, str | None]:
        text = StreamedText()
        finish_reason: str | None = None
        done = False
        events = 0
        for data in sse_data(response, deadline, self.timeout):
            if data == b"[DONE]":
                done = True
                break
            if (event := _stream_event(reply_json(data, "reply stream event"))) is None:
                continue
            events += 1
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

    def _read_body(self, raw: bytes) -> tuple[str, str | None]:
        payload = reply_json(raw, "reply body")
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

    def _stepped_down(self, exc: BackendError) -> bool:
        if not (
            isinstance(exc, BackendHTTPError)
            and not isinstance(exc, BackendContextOverflow)
            and exc.status in FORMAT_REFUSALS
            and exc.about_format
        ):
            return False
        fmt = self.output_format
        lower = _LADDER[fmt][1]
        if lower is None:
            return False
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
        return True

    def _http_error(self, response: httpx.Response) -> BackendHTTPError:
        # OpenAI sends {"error": {"message", "type", "code", "param"}}; compatible servers
        # vary. The message is read for the format and overflow words alone, never copied.
        raw, error = read_error_body(response)
        code = None
        if isinstance(error, dict):
            code = safe_code(error.get("code")) or safe_code(error.get("type"))
        status = response.status_code
        overflow = status in (400, 413, 422) and OVERFLOW_WORDS.search(raw)
        if code == "context_length_exceeded" or overflow:
            return BackendContextOverflow(status, code=code or "context_length_exceeded")
        error = BackendHTTPError(
            status, code=code, about_format=FORMAT_NAMES.search(raw) is not None
        )
        if status >= 500:  # the server's own failure: worth the one retry
            error.retry_wait = self.retry_backoff
        return error


def _stream_event(payload: Any) -> tuple[str, str | None] | None:
    """(delta text, finish reason); None for usage-only chunks and the like."""
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
        return None
    delta = choice.get("delta")
    text = delta.get("content") if isinstance(delta, dict) else None
    reason = choice.get("finish_reason")
    return (text if isinstance(text, str) else "", reason if isinstance(reason, str) else None)


def openai_backend(model: str, settings: OpenAISettings) -> OpenAIBackend:
    model = spec_model("openai", model, "gpt-4o-mini")
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
        retry_backoff=settings.KIROCREW_OPENAI_RETRY_BACKOFF,
    )
