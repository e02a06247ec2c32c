"""Summarizer backend that speaks the OpenAI chat-completions protocol over httpx.

Works with api.openai.com and with local OpenAI-compatible servers (Ollama, llama.cpp's
``llama_cpp.server``, vLLM) at e.g. ``http://127.0.0.1:11434/v1``.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Protocol

import httpx

from summaries.core.backends.base import (
    BackendContextOverflow,
    BackendError,
    BackendHTTPError,
    BackendUnavailable,
)
from summaries.core.backends.http import (
    MAX_REPLY_BYTES,
    HTTPBackend,
    names_overflow,
    read_error_body,
    safe_code,
)
from summaries.core.backends.openai_format import (
    FORMAT_NAMES,
    FORMAT_REFUSALS,
    JSON_OBJECT_FORMAT,
    JSON_OBJECT_SCHEMA_FORMAT,
    RESPONSE_FORMAT,
    OutputFormat,
    format_learned,
    format_remember,
)
from summaries.core.backends.openai_reply import extract_content, read_stream

__all__ = [
    "JSON_OBJECT_FORMAT",
    "JSON_OBJECT_SCHEMA_FORMAT",
    "MAX_REPLY_BYTES",
    "RESPONSE_FORMAT",
    "SYSTEM_LINE",
    "OpenAIBackend",
    "OutputFormat",
    "openai_backend",
]

log = logging.getLogger(__name__)

DEFAULT_RETRY_BACKOFF: Final = 0.5
SYSTEM_LINE: Final = (
    "You summarize chat transcripts by intent. Reply with one JSON object and nothing else."
)


class OpenAISettings(Protocol):
    """The settings this backend reads (declared in kirocrew_site/settings.py)."""

    KIROCREW_OPENAI_BASE_URL: str
    KIROCREW_OPENAI_API_KEY: str
    KIROCREW_OPENAI_TIMEOUT: float
    KIROCREW_OPENAI_MAX_TOKENS: int
    KIROCREW_OPENAI_RETRY_BACKOFF: float


class OpenAIBackend(HTTPBackend):
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

    KIND = "openai"
    ENDPOINT = "/chat/completions"
    URL_SETTING = "the OpenAI base URL"

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
        self._configure(model, base_url, api_key, timeout, max_tokens, transport, retry_backoff)

    @property
    def output_format(self) -> OutputFormat:
        return format_learned(self.url, self.model)

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
            "response_format": self.output_format.body,
        }
        return body, headers

    CUT_OFF = "length"

    def _read_stream(self, response: httpx.Response, deadline: float) -> tuple[str, str | None]:
        return read_stream(response, deadline, self.timeout)

    def _read_body(self, raw: bytes) -> tuple[str, str | None]:
        return extract_content(raw)

    def _retry_wait(self, exc: BackendError) -> float | None:
        return self.retry_backoff if _is_transient(exc) else None

    def _stepped_down(self, exc: BackendError) -> bool:
        """The next format down the ladder when the server refused the current one,
        remembered for this URL and model (so the next request and pass ask for it)."""
        if not (
            isinstance(exc, BackendHTTPError)
            and not isinstance(exc, BackendContextOverflow)
            and exc.status in FORMAT_REFUSALS
            and exc.about_format
        ):
            return False
        fmt = self.output_format
        lower = fmt.fallback
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
        format_remember(self.url, self.model, lower)
        return True

    def _http_error(self, response: httpx.Response) -> BackendHTTPError:
        """The typed error for a non-success answer.

        OpenAI sends ``{"error": {"message", "type", "code", "param"}}``; compatible
        servers vary. Only identifier-like codes are kept; the message is read for the
        format and overflow words alone, never copied.
        """
        raw, payload = read_error_body(response)
        error = payload.get("error") if isinstance(payload, dict) else None
        code = None
        if isinstance(error, dict):
            code = safe_code(error.get("code")) or safe_code(error.get("type"))
        status = response.status_code
        if code == "context_length_exceeded" or (status in (400, 413, 422) and names_overflow(raw)):
            return BackendContextOverflow(status, code=code or "context_length_exceeded")
        return BackendHTTPError(
            status, code=code, about_format=FORMAT_NAMES.search(raw) is not None
        )


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
        retry_backoff=settings.KIROCREW_OPENAI_RETRY_BACKOFF,
    )


def _is_transient(exc: BackendError) -> bool:
    if isinstance(exc, BackendUnavailable):
        return True
    return (
        isinstance(exc, BackendHTTPError)
        and not isinstance(exc, BackendContextOverflow)
        and exc.status >= 500
    )
