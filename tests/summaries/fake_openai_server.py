"""A real HTTP server on loopback that speaks (enough of) OpenAI chat completions.

Tests script what each incoming request gets and then assert on what the client
actually sent, over a real socket: timeouts, refused and dropped connections and
oversize bodies behave as they do in production, which a mocked function or an
``httpx.MockTransport`` cannot show.

Usage::

    def test_retry(fake_openai: FakeOpenAIServer) -> None:
        fake_openai.enqueue(Behaviour.error(500), Behaviour.reply('{"intents": []}'))
        backend = OpenAIBackend("m", fake_openai.base_url, api_key=None)
        assert backend.generate("prompt", []) == '{"intents": []}'
        assert len(fake_openai.requests) == 2

Each request pops the next scripted :class:`Behaviour`; once the queue is empty
it gets ``fake_openai.default`` if set, otherwise an HTTP 500 with error code
``fake_server_unscripted`` (counted in ``unscripted``), so a test that sends more
requests than it planned notices. Every request is recorded before the behaviour
runs, so a request the client gave up on still counts.

The ``fake_openai`` fixture is function-scoped and registered suite-wide through the
root conftest's ``pytest_plugins``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["Behaviour", "FakeOpenAIServer", "RecordedRequest", "closed_port", "fake_openai"]


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
        return cls.json(payload, delay=delay, chunked=chunked)

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
        return cls(
            status=base.status,
            body=base.body,
            content_type=base.content_type,
            delay=seconds,
            drop=base.drop,
            chunked=base.chunked,
            headers=base.headers,
        )

    @classmethod
    def close(cls, *, delay: float = 0.0) -> Behaviour:
        """Read the request, then close the connection without answering."""
        return cls(drop=True, delay=delay)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # parsed body, or None when it is not JSON
    received_at: float  # time.monotonic() when the request was fully read


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: deque[Behaviour] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    default: Behaviour | None = None
    unscripted: int = 0


_UNSCRIPTED = Behaviour.error(500, code="fake_server_unscripted", message="no behaviour scripted")


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so chunked replies are legal; every other reply sets Content-Length.
    protocol_version = "HTTP/1.1"
    # An idle keep-alive connection must not pin a handler thread forever.
    timeout = 10
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        # The default handler writes every request to stderr.
        pass

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        state = self.server.state
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    json=parsed,
                    received_at=time.monotonic(),
                )
            )
            if state.queue:
                behaviour = state.queue.popleft()
            elif state.default is not None:
                behaviour = state.default
            else:
                state.unscripted += 1
                behaviour = _UNSCRIPTED

        # Interruptible, so stopping the server does not wait out a long delay.
        if behaviour.delay and state.stopping.wait(behaviour.delay):
            self.close_connection = True
            return
        try:
            self._respond(behaviour)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout) while we were delaying: expected.
            self.close_connection = True

    def _respond(self, behaviour: Behaviour) -> None:
        if behaviour.drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(behaviour.status)
        self.send_header("Content-Type", behaviour.content_type)
        for name, value in behaviour.headers:
            self.send_header(name, value)
        if behaviour.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            step = 64 * 1024
            for start in range(0, len(behaviour.body), step):
                piece = behaviour.body[start : start + step]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(behaviour.body)))
            self.end_headers()
            self.wfile.write(behaviour.body)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out or refuse an oversize body hang up mid-exchange;
        # that is the scenario under test, not a server fault worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeOpenAIServer:
    """The scriptable server; ``base_url`` ends in ``/v1`` like a real one."""

    def __init__(self) -> None:
        self._state = _State()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.state = self._state
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-openai:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def enqueue(self, *behaviours: Behaviour) -> None:
        """Append behaviours; each request consumes one, in order."""
        with self._state.lock:
            self._state.queue.extend(behaviours)

    @property
    def default(self) -> Behaviour | None:
        """Served once the queue is empty (``None``: an "unscripted" 500)."""
        return self._state.default

    @default.setter
    def default(self, behaviour: Behaviour | None) -> None:
        with self._state.lock:
            self._state.default = behaviour

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def pending(self) -> int:
        """Scripted behaviours not consumed yet."""
        with self._state.lock:
            return len(self._state.queue)

    @property
    def unscripted(self) -> int:
        """Requests that found neither a scripted behaviour nor a default."""
        with self._state.lock:
            return self._state.unscripted


def closed_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` on 127.0.0.1, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server
