"""Summarizer backend that speaks the OpenAI chat-completions protocol over httpx.

Works with api.openai.com and with local OpenAI-compatible servers (Ollama,
llama.cpp, vLLM) at e.g. ``http://127.0.0.1:11434/v1``.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Sequence
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

import httpx

from summaries.core.backends.base import (
    BackendBadReply,
    BackendError,
    BackendHTTPError,
    BackendTimeout,
    BackendUnavailable,
)
from summaries.core.intents import reply_json_schema
from summaries.core.transcript_turn import TranscriptTurn

log = logging.getLogger(__name__)

#: Largest reply body accepted. A summary is a few KB of JSON; anything near this
#: size is a misbehaving server, and reading it unbounded would let one bad reply
#: exhaust a worker's memory.
MAX_REPLY_BYTES: Final = 2 * 1024 * 1024
#: How much of an error body is read to look for a machine-readable error code.
MAX_ERROR_BODY_BYTES: Final = 64 * 1024
#: Connecting is quick or hopeless; do not spend a whole generation timeout on it.
MAX_CONNECT_TIMEOUT: Final = 10.0
DEFAULT_RETRY_BACKOFF: Final = 0.5
#: Attempts per ``generate`` call: the first plus exactly one retry.
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
#: What a server without structured output gets instead: it refuses ``json_schema`` with a
#: 400 (or 422) naming the parameter, and the request is sent once more with this.
JSON_OBJECT_FORMAT: Final = {"type": "json_object"}
#: The refusals that mean "this server does not know json_schema": never a 5xx, which
#: is retried as transient, nor 401/403/404, which no other format would cure.
_FORMAT_REFUSALS: Final = frozenset({400, 422})
_FORMAT_NAMES: Final = re.compile(rb"response_format|json_schema", re.IGNORECASE)


class OpenAISettings(Protocol):
    """The settings this backend reads (declared in kirocrew_site/settings.py)."""

    KIROCREW_OPENAI_BASE_URL: str
    KIROCREW_OPENAI_API_KEY: str
    KIROCREW_OPENAI_TIMEOUT: float
    KIROCREW_OPENAI_MAX_TOKENS: int


# Error codes copied into exception messages must look like identifiers, so a
# server that echoes the request into its error fields cannot leak it into logs.
_SAFE_CODE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


class OpenAIBackend:
    """Chat-completions client for the background summarizer role.

    One ``generate`` call is one ``POST {base_url}/chat/completions`` with
    ``temperature`` 0 and ``response_format`` :data:`RESPONSE_FORMAT`; it returns
    ``choices[0].message.content`` unparsed. A reply cut off at ``max_tokens``
    (``finish_reason == "length"``) is still returned: the caller's parser
    decides whether the truncated JSON is usable. ``turns`` is ignored because
    the prompt already contains the rendered transcript.

    Retry policy: at most one retry (two attempts), after ``retry_backoff``
    seconds, when the failure may be transient: an HTTP 5xx, a timeout, or a
    connection failure (refused, DNS, dropped before a complete response).
    Connection failures are retried too because a local model server that is
    restarting or reloading a model refuses or drops connections for a moment,
    and a refused connection never reached the model, so the retry cannot pay for
    a generation twice. Not retried: 4xx (the same request gets the same answer,
    429 included: the summary pass simply keeps the previous summary) and a 2xx
    whose body is unusable (the model already ran; a retry would pay again for a
    likely identical answer). There is never a fallback to another model.

    Timeouts: ``timeout`` bounds each read (waiting for the model to finish, since
    the reply is not streamed) and each attempt's wall-clock time, checked between
    body chunks; connecting is capped at ``MAX_CONNECT_TIMEOUT``. Worst case per
    call is therefore about ``2 * (connect + 2 * timeout) + retry_backoff``.

    Thread safety: each call builds and closes its own ``httpx.Client`` and the
    instance holds only immutable configuration, so one backend may be shared by
    threads, and nothing (no pooled socket) is inherited across a Celery prefork.
    The connection setup this costs is negligible next to a model generation.
    A caller-supplied ``transport`` is used by every call and never closed here.

    ``trust_env`` is off: the base URL is explicit configuration, and proxy
    variables or a ``.netrc`` must not silently reroute or add credentials to a
    request that carries the user's conversation. Pass a ``transport``
    (e.g. ``httpx.HTTPTransport(proxy=...)``) when a proxy is really wanted.

    The API key is sent only as ``Authorization: Bearer`` and only when it is
    non-empty; it never appears in ``repr`` or in exception messages.
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
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        if not (math.isfinite(retry_backoff) and retry_backoff >= 0):
            raise ValueError(f"retry_backoff must be >= 0 seconds, got {retry_backoff!r}")

        self.name = f"openai:{model}"
        self.model = model
        # Validated to carry no userinfo, query or fragment, so it is safe to put
        # into log lines and exception messages.
        self.url = _chat_completions_url(base_url)
        self.timeout = float(timeout)
        self.max_tokens = max_tokens
        self.retry_backoff = float(retry_backoff)
        self._transport = transport
        # A key copied from an env file often carries a trailing newline, which
        # httpx would reject as an illegal header value; blank means "no key".
        self._api_key = (api_key or "").strip()
        # Until the server refuses it: then JSON_OBJECT_FORMAT for this backend's lifetime.
        self._schema_ok = True

    def __repr__(self) -> str:
        # Spelled out so the key can never reach a log through repr().
        return (
            f"OpenAIBackend(model={self.model!r}, url={self.url!r}, timeout={self.timeout}, "
            f"max_tokens={self.max_tokens}, api_key={'set' if self._api_key else 'unset'})"
        )

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_LINE},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "response_format": RESPONSE_FORMAT if self._schema_ok else JSON_OBJECT_FORMAT,
        }
        headers = {
            "Accept": "application/json",
            # Ask for an unencoded body so the size cap counts what the server
            # really sends and a compressed reply cannot inflate past it at once.
            "Accept-Encoding": "identity",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"

        client = httpx.Client(
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, MAX_CONNECT_TIMEOUT)),
            transport=self._transport,
            follow_redirects=False,
            trust_env=False,
        )
        try:
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    return self._attempt(client, body, headers)
                except BackendError as exc:
                    if self._schema_refused(exc, body):
                        return self._attempt(client, body, headers)
                    if attempt == ATTEMPTS or not _is_transient(exc):
                        raise
                    log.info(
                        "summary backend %s: attempt %d failed (%s: %s); retrying in %.1f s",
                        self.name,
                        attempt,
                        type(exc).__name__,
                        exc,
                        self.retry_backoff,
                    )
                    time.sleep(self.retry_backoff)
            raise AssertionError("unreachable: the last attempt returns or raises")
        finally:
            # A caller-owned transport outlives this call; closing the client
            # would close it.
            if self._transport is None:
                client.close()

    def _schema_refused(self, exc: BackendError, body: dict[str, Any]) -> bool:
        """Whether the server refused structured output; if so, ``body`` now asks for a
        plain JSON object, as does every later request of this backend.

        Structured output is optional for OpenAI-compatible servers (older vLLM,
        llama.cpp, proxies); the normalizer copes with whatever object comes back.
        """
        if not (
            isinstance(exc, BackendHTTPError)
            and exc.status in _FORMAT_REFUSALS
            and exc.about_format
            and self._schema_ok
        ):
            return False
        log.info(
            "summary backend %s: server refused json_schema output (HTTP %d); "
            "asking for a JSON object instead",
            self.name,
            exc.status,
        )
        self._schema_ok = False
        body["response_format"] = JSON_OBJECT_FORMAT
        return True

    def _attempt(self, client: httpx.Client, body: dict[str, Any], headers: dict[str, str]) -> str:
        deadline = time.monotonic() + self.timeout
        try:
            with client.stream("POST", self.url, json=body, headers=headers) as response:
                if not response.is_success:
                    code, about_format = _error_info(response)
                    raise BackendHTTPError(
                        response.status_code, code=code, about_format=about_format
                    )
                raw = _read_capped(response, MAX_REPLY_BYTES, deadline, self.timeout)
        except httpx.TimeoutException as exc:
            raise BackendTimeout(
                f"model server at {self.url} did not answer within {self.timeout:g} s "
                f"({type(exc).__name__})"
            ) from exc
        except httpx.ConnectError as exc:
            raise BackendUnavailable(
                f"cannot connect to model server at {self.url} ({_os_reason(exc)})"
            ) from exc
        except httpx.DecodingError as exc:
            raise BackendBadReply(f"reply body from {self.url} could not be decoded") from exc
        except httpx.TransportError as exc:
            # ReadError, WriteError, RemoteProtocolError: the connection broke
            # before a complete response arrived.
            raise BackendUnavailable(
                f"model server at {self.url} dropped the connection ({type(exc).__name__})"
            ) from exc

        content, finish_reason = _extract_content(raw)
        if finish_reason == "length":
            log.warning(
                "summary backend %s: reply cut off at max_tokens=%d; returning it anyway",
                self.name,
                self.max_tokens,
            )
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


def _chat_completions_url(base_url: str) -> str:
    base = (base_url or "").strip()
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "the OpenAI base URL must look like http(s)://host[:port][/path], "
            "e.g. http://127.0.0.1:11434/v1"
        )
    # Credentials belong in the API key setting; query strings and fragments would
    # not survive appending the path. Neither the URL nor its parts are echoed, in
    # case they hold a secret.
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "the OpenAI base URL must not contain credentials; use the API key setting"
        )
    if parts.query or parts.fragment:
        raise ValueError("the OpenAI base URL must not contain a query string or fragment")
    return base.rstrip("/") + "/chat/completions"


def _is_transient(exc: BackendError) -> bool:
    if isinstance(exc, BackendTimeout | BackendUnavailable):
        return True
    return isinstance(exc, BackendHTTPError) and exc.status >= 500


def _read_capped(response: httpx.Response, cap: int, deadline: float, timeout: float) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > cap:
        raise BackendBadReply(f"reply body declares {int(declared)} bytes, over the {cap}-byte cap")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise BackendBadReply(f"reply body exceeds the {cap}-byte cap")
        chunks.append(chunk)
        # The read timeout bounds each socket read, not the whole body: a server
        # trickling bytes could otherwise hold the worker indefinitely.
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout(f"reply body still arriving after {timeout:g} s")
    return b"".join(chunks)


def _error_info(response: httpx.Response) -> tuple[str | None, bool]:
    """The server's short error code/type, if its error body has one, and whether the
    body names the requested output format (the sign of a server without structured
    output: ``response_format`` or ``json_schema`` in its message or ``param``).

    OpenAI sends ``{"error": {"message", "type", "code", "param"}}``; compatible servers
    vary. Only identifier-like codes are kept (see ``_SAFE_CODE``); the message is read
    for the two names alone, never copied.
    """
    try:
        raw = _read_capped(response, MAX_ERROR_BODY_BYTES, time.monotonic() + 5.0, timeout=5.0)
    except (httpx.HTTPError, BackendBadReply):
        # The status code alone is enough to report; the body is a bonus.
        return None, False
    about_format = _FORMAT_NAMES.search(raw) is not None
    try:
        payload = json.loads(raw)
    except ValueError:
        return None, about_format
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None, about_format
    for key in ("code", "type"):
        value = error.get(key)
        if isinstance(value, str) and _SAFE_CODE.fullmatch(value):
            return value, about_format
    return None, about_format


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


def _os_reason(exc: httpx.ConnectError) -> str:
    # httpx's ConnectError text is the OS error ("[Errno 111] Connection refused",
    # "[Errno -2] Name or service not known"): it names no header or body.
    return str(exc) or type(exc).__name__
