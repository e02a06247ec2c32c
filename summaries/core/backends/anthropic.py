"""``anthropic:<model>``: Anthropic's Messages API, keyed by ``ANTHROPIC_API_KEY`` (the
name Anthropic's own tools read). Of an error body only ``error.type`` is kept."""

from __future__ import annotations

from typing import Any, Final, Protocol

import httpx

from summaries.core.backends.base import (
    BackendBadReply,
    BackendContextOverflow,
    BackendHTTPError,
    BackendUnavailable,
)
from summaries.core.backends.http import (
    MAX_RETRY_AFTER,
    OVERFLOW_WORDS,
    HTTPBackend,
    StreamedText,
    read_error_body,
    reply_json,
    retry_after,
    safe_code,
    spec_model,
    sse_data,
)
from summaries.core.backends.openai import SYSTEM_LINE

API_VERSION: Final = "2023-06-01"  # sent as ``anthropic-version``
#: Statuses worth one more attempt: overloaded (529), the server's own failures, and a
#: rate limit (429) only when it says how long to wait.
_RETRIED: Final = frozenset({500, 502, 503, 504, 529})
#: Error types in a stream that mean "the server could not finish", not "bad request".
_TRANSIENT_STREAM_ERRORS: Final = frozenset({"overloaded_error", "api_error"})


class AnthropicSettings(Protocol):
    KIROCREW_ANTHROPIC_BASE_URL: str
    ANTHROPIC_API_KEY: str
    KIROCREW_ANTHROPIC_TIMEOUT: float
    KIROCREW_ANTHROPIC_MAX_TOKENS: int


class AnthropicBackend(HTTPBackend):
    """Never retried: a timeout (the generation may still be running, and is billed)."""

    KIND = "anthropic"
    ENDPOINT = "/v1/messages"
    URL_SETTING = "KIROCREW_ANTHROPIC_BASE_URL"
    CUT_OFF = "max_tokens"

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = "https://api.anthropic.com",
        timeout: float = 60.0,
        max_tokens: int = 2000,
        transport: httpx.BaseTransport | None = None,
        *,
        retry_backoff: float = 1.0,
    ) -> None:
        super().__init__(
            model, base_url, api_key, timeout, max_tokens, transport, retry_backoff=retry_backoff
        )

    def _request(self, prompt: str, *, stream: bool) -> tuple[dict[str, Any], dict[str, str]]:
        body = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": SYSTEM_LINE,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            # Streamed, so giving up (timeout, size cap) closes the connection and ends
            # the generation instead of leaving it running, and billed, for nobody.
            "stream": stream,
        }
        headers = {
            "x-api-key": self._api_key,
            "anthropic-version": API_VERSION,
            "accept": "text/event-stream, application/json",
            "accept-encoding": "identity",
        }
        return body, headers

    def _read_stream(self, response: httpx.Response, deadline: float) -> tuple[str, str | None]:
        text = StreamedText()
        stop: str | None = None
        for data in sse_data(response, deadline, self.timeout):
            event = reply_json(data, "reply stream event")
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "content_block_delta":
                delta = event.get("delta")
                if isinstance(delta, dict) and isinstance(delta.get("text"), str):
                    text.add(delta["text"])
            elif kind == "message_delta":
                delta = event.get("delta")
                reason = delta.get("stop_reason") if isinstance(delta, dict) else None
                stop = reason if isinstance(reason, str) else stop
            elif kind == "message_stop":
                break
            elif kind == "error":
                error = event.get("error")
                code = safe_code(error.get("type")) if isinstance(error, dict) else None
                if code in _TRANSIENT_STREAM_ERRORS:
                    raise BackendUnavailable(f"reply stream ended with {code}")
                raise BackendBadReply(f"reply stream ended with {code or 'an error'}")
        else:
            raise BackendUnavailable("model server ended the reply stream before message_stop")
        return _checked(text.text(), stop)

    def _read_body(self, raw: bytes) -> tuple[str, str | None]:
        payload = reply_json(raw, "reply body")
        if not isinstance(payload, dict) or payload.get("type") != "message":
            raise BackendBadReply("reply is not a message object")
        content = payload.get("content")
        if not isinstance(content, list):
            raise BackendBadReply("reply message has no content list")
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
        stop = payload.get("stop_reason")
        return _checked("".join(texts), stop if isinstance(stop, str) else None)

    def _http_error(self, response: httpx.Response) -> BackendHTTPError:
        raw, error = read_error_body(response)
        code = safe_code(error.get("type")) if isinstance(error, dict) else None
        status = response.status_code
        if status in (400, 413) and OVERFLOW_WORDS.search(raw):
            return BackendContextOverflow(status, code=code)
        error = BackendHTTPError(status, code=code)
        after = retry_after(response)
        if status in _RETRIED or (status == 429 and after is not None):
            wait = self.retry_backoff if after is None else after
            error.retry_wait = wait if wait <= MAX_RETRY_AFTER else None
        return error


def _checked(text: str, stop: str | None) -> tuple[str, str | None]:
    if not text.strip() and stop != "max_tokens":
        raise BackendBadReply("reply message has no text")
    return text, stop


def anthropic_backend(model: str, settings: AnthropicSettings) -> AnthropicBackend:
    model = spec_model("anthropic", model, "claude-3-5-haiku-latest")
    key = (settings.ANTHROPIC_API_KEY or "").strip()
    if not key:
        raise ValueError(f"KIROCREW_SUMMARY_MODEL 'anthropic:{model}' needs ANTHROPIC_API_KEY")
    return AnthropicBackend(
        model,
        key,
        base_url=settings.KIROCREW_ANTHROPIC_BASE_URL,
        timeout=settings.KIROCREW_ANTHROPIC_TIMEOUT,
        max_tokens=settings.KIROCREW_ANTHROPIC_MAX_TOKENS,
    )
