"""What every HTTP model backend shares, so OpenAI's and Anthropic's cannot drift:
``trust_env`` off and no redirects (proxy variables or a ``.netrc`` must not reroute or add
credentials to a request carrying the conversation); bodies read under a byte cap and a
deadline; only identifier-like codes copied from an error body; one retry at most."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

import httpx

from summaries.core.backends.base import (
    BackendBadReply,
    BackendEmptyStream,
    BackendError,
    BackendHTTPError,
    BackendRunaway,
    BackendTimeout,
    BackendUnavailable,
)
from summaries.core.transcript_turn import TranscriptTurn

log = logging.getLogger(__name__)

#: A summary is a few KB of JSON; a body near this size is a misbehaving server or a runaway.
MAX_REPLY_BYTES: Final = 2 * 1024 * 1024
# A streamed reply carries each delta in its own JSON event: framing can be ~25x the text
# of a short delta, so the text and the stream have caps of their own. The text cap is 4x
# what the 4,096-token output limit can produce; past it the reply is a runaway.
MAX_REPLY_TEXT_BYTES: Final = 64 * 1024
MAX_STREAM_BYTES: Final = 16 * MAX_REPLY_BYTES
MAX_ERROR_BODY_BYTES: Final = 64 * 1024
MAX_CONNECT_TIMEOUT: Final = 10.0  # connecting is quick or hopeless
#: A reply's output limit is clamped to this many tokens: a summary is about a thousand;
#: a larger limit only lets a runaway generation hold a single-slot server longer.
MAX_OUTPUT_TOKENS: Final = 4096
#: The first plus one retry (a format step-down is not an attempt: the ladder bounds it).
ATTEMPTS: Final = 2
#: The longest ``Retry-After`` honoured: a longer wait is not worth holding a worker for
#: (the pass fails; the next turn end tries again).
MAX_RETRY_AFTER: Final = 30.0

#: A prompt longer than the context window, in the error messages of OpenAI, llama.cpp,
#: vLLM, Ollama and Anthropic (read for these words alone; never copied).
OVERFLOW_WORDS: Final = re.compile(
    rb"maximum context length|context window|context length|too many tokens|prompt is too long",
    re.IGNORECASE,
)


# Error codes copied into exception messages must look like identifiers, so a server that
# echoes the request into its error fields cannot leak it into logs.
_SAFE_CODE: Final = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def safe_code(value: object) -> str | None:
    return value if isinstance(value, str) and _SAFE_CODE.fullmatch(value) else None


def http_client(timeout: float, transport: httpx.BaseTransport | None) -> httpx.Client:
    return httpx.Client(
        timeout=httpx.Timeout(timeout, connect=min(timeout, MAX_CONNECT_TIMEOUT)),
        transport=transport,
        follow_redirects=False,
        trust_env=False,
    )


def endpoint_url(base_url: str, path: str, *, setting: str) -> str:
    """The error never echoes the URL, in case it holds a secret."""
    base = (base_url or "").strip()
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{setting} must look like http(s)://host[:port][/path]")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"{setting} must not contain credentials; use the API key setting")
    if parts.query or parts.fragment:
        raise ValueError(f"{setting} must not contain a query string or fragment")
    return base.rstrip("/") + path


def spec_model(kind: str, model: str, example: str) -> str:
    if not model.strip():
        raise ValueError(
            f"KIROCREW_SUMMARY_MODEL '{kind}:' needs a model name, e.g. '{kind}:{example}'"
        )
    return model.strip()


def check_timeout(timeout: float) -> float:
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def read_capped(response: httpx.Response, cap: int, deadline: float, timeout: float) -> bytes:
    """The whole body, refused past ``cap`` bytes (a runaway) or past ``deadline``."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > cap:
        raise BackendRunaway(f"reply body declares {int(declared)} bytes, over the {cap}-byte cap")
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > cap:
            raise BackendRunaway(f"reply body exceeds the {cap}-byte cap")
        # The read timeout bounds each socket read, not the whole body: a server
        # trickling bytes could otherwise hold the worker indefinitely.
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout(f"reply body still arriving after {timeout:g} s")
    return bytes(body)


def read_error_body(response: httpx.Response) -> tuple[bytes, Any]:
    """An error body (bounded) and its JSON's ``error`` member."""
    try:
        raw = read_capped(response, MAX_ERROR_BODY_BYTES, time.monotonic() + 5.0, timeout=5.0)
    except (httpx.HTTPError, BackendBadReply):
        return b"", None  # the status code alone is enough to report; the body is a bonus
    try:
        payload = json.loads(raw)
    except ValueError:
        return raw, None
    return raw, payload.get("error") if isinstance(payload, dict) else None


def retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (the delta form; an HTTP date is not honoured)."""
    try:
        seconds = float(response.headers.get("retry-after") or "")
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@contextlib.contextmanager
def transport_errors(url: str, timeout: float) -> Iterator[None]:
    """httpx's failures as ``BackendError``s naming no header or body. A connect failure
    never reached the model (``BackendUnavailable``, safe to retry); after a read timeout
    the model may still be generating (``BackendTimeout``: do not blindly ask again)."""
    try:
        yield
    except httpx.ConnectTimeout as exc:
        raise BackendUnavailable(f"cannot connect to model server at {url} (timeout)") from exc
    except httpx.TimeoutException as exc:
        raise BackendTimeout(
            f"model server at {url} did not answer within {timeout:g} s ({type(exc).__name__})"
        ) from exc
    except httpx.ConnectError as exc:
        # httpx's ConnectError text is the OS error ("[Errno 111] Connection refused").
        reason = str(exc) or type(exc).__name__
        raise BackendUnavailable(f"cannot connect to model server at {url} ({reason})") from exc
    except httpx.DecodingError as exc:
        raise BackendBadReply(f"reply body from {url} could not be decoded") from exc
    except httpx.TransportError as exc:
        # ReadError, WriteError, RemoteProtocolError: the connection broke before a
        # complete response arrived.
        raise BackendUnavailable(
            f"model server at {url} dropped the connection ({type(exc).__name__})"
        ) from exc


class HTTPBackend:
    """The endpoint has no userinfo, query or fragment (safe in logs); the timeout bounds
    each read and each attempt's wall clock; each call builds its own client."""

    KIND: ClassVar[str]  # the spec's prefix: "openai", "anthropic"
    ENDPOINT: ClassVar[str]  # the path under the base URL
    URL_SETTING: ClassVar[str]  # named in a bad base URL's error
    CUT_OFF: ClassVar[str]  # the stop reason of a reply cut at the token limit

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None,
        timeout: float = 60.0,
        max_tokens: int = 2000,
        transport: httpx.BaseTransport | None = None,
        *,
        retry_backoff: float = 0.5,
    ) -> None:
        model = model.strip()
        if not model:
            raise ValueError(f"{type(self).__name__} needs a model name")
        if not (math.isfinite(retry_backoff) and retry_backoff >= 0):
            raise ValueError(f"retry_backoff must be >= 0 seconds, got {retry_backoff!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        self.name = f"{self.KIND}:{model}"
        self.model = model
        self.url = endpoint_url(base_url, self.ENDPOINT, setting=self.URL_SETTING)
        self.timeout = check_timeout(timeout)
        self.max_tokens = min(max_tokens, MAX_OUTPUT_TOKENS)
        self.retry_backoff = float(retry_backoff)
        self._transport = transport
        # A key copied from an env file often carries a trailing newline, which httpx
        # would reject as an illegal header value; blank means "no key".
        self._api_key = (api_key or "").strip()

    def __repr__(self) -> str:
        # Spelled out so the key can never reach a log through repr().
        return (
            f"{type(self).__name__}(model={self.model!r}, url={self.url!r}, "
            f"timeout={self.timeout}, max_tokens={self.max_tokens}, "
            f"api_key={'set' if self._api_key else 'unset'})"
        )

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        client = http_client(self.timeout, self._transport)
        stream, attempt = True, 1
        try:
            while True:
                body, headers = self._request(prompt, stream=stream)
                try:
                    return self._attempt(client, body, headers)
                except BackendError as exc:
                    if isinstance(exc, BackendEmptyStream) and stream:
                        stream = False  # its refusal comes whole; the next pass streams
                        log.info(
                            "summary backend %s: empty reply stream; asking unstreamed", self.name
                        )
                        continue
                    if self._stepped_down(exc):
                        continue
                    wait = self._retry_wait(exc)
                    if attempt >= ATTEMPTS or wait is None:
                        raise
                    log.info(
                        "summary backend %s: attempt %d failed (%s: %s); retrying in %.1f s",
                        self.name,
                        attempt,
                        type(exc).__name__,
                        exc,
                        wait,
                    )
                    attempt += 1
                    time.sleep(wait)
        finally:
            # A caller-owned transport outlives this call; closing the client would close it.
            if self._transport is None:
                client.close()

    def _attempt(self, client: httpx.Client, body: dict[str, Any], headers: dict[str, str]) -> str:
        deadline = time.monotonic() + self.timeout
        with (
            transport_errors(self.url, self.timeout),
            client.stream("POST", self.url, json=body, headers=headers) as response,
        ):
            if not response.is_success:
                raise self._http_error(response)
            if "text/event-stream" in response.headers.get("content-type", ""):
                text, stop = self._read_stream(response, deadline)
            else:
                text, stop = self._read_body(
                    read_capped(response, MAX_REPLY_BYTES, deadline, self.timeout)
                )
        if stop == self.CUT_OFF:
            raise BackendRunaway(f"reply cut off at max_tokens={self.max_tokens}")
        return text

    # What each protocol says for itself.
    def _request(self, prompt: str, *, stream: bool) -> tuple[dict[str, Any], dict[str, str]]:
        raise NotImplementedError  # the body and headers of one attempt

    def _read_stream(self, response: httpx.Response, deadline: float) -> tuple[str, str | None]:
        raise NotImplementedError  # a streamed reply's text and stop reason

    def _read_body(self, raw: bytes) -> tuple[str, str | None]:
        raise NotImplementedError  # a whole reply's text and stop reason

    def _http_error(self, response: httpx.Response) -> BackendHTTPError:
        raise NotImplementedError

    def _retry_wait(self, exc: BackendError) -> float | None:
        """Seconds to wait before the one retry, or None: not retried. A refused or dropped
        connection never reached the model; an HTTP error carries its own ``retry_wait``."""
        if isinstance(exc, BackendUnavailable):
            return self.retry_backoff
        return exc.retry_wait if isinstance(exc, BackendHTTPError) else None

    def _stepped_down(self, exc: BackendError) -> bool:
        """Whether ``exc`` made the next request ask differently (tried again, not an
        attempt)."""
        return False


def sse_data(response: httpx.Response, deadline: float, timeout: float) -> Iterator[bytes]:
    """The data of each ``data:`` line of an event stream, under ``MAX_STREAM_BYTES`` and
    ``deadline``. The caller stops when its protocol says done; leaving its ``with``
    closes the connection, which stops a real server's generation."""
    size, pending = 0, b""
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_STREAM_BYTES:
            raise BackendRunaway(f"reply stream exceeds the {MAX_STREAM_BYTES}-byte cap")
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout(f"reply still streaming after {timeout:g} s")
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            line = line.strip()
            if line.startswith(b"data:"):
                yield line[5:].strip()


def reply_json(raw: bytes, what: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise BackendBadReply(f"{what} is not JSON") from exc


@dataclass(slots=True)
class StreamedText:
    """A reply's text deltas, under ``MAX_REPLY_TEXT_BYTES`` (a runaway past it)."""

    parts: list[str] = field(default_factory=list)
    size: int = 0

    def add(self, text: str) -> None:
        self.size += len(text.encode())
        if self.size > MAX_REPLY_TEXT_BYTES:
            raise BackendRunaway(f"reply text exceeds the {MAX_REPLY_TEXT_BYTES}-byte cap")
        self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)
