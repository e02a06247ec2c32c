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

from tests.summaries.fake_server_behaviour import (
    DIALECTS,
    LLAMA_CPP,
    Behaviour,
    Generation,
    ServerProfile,
    tokens_of,
)

__all__ = [
    "LLAMA_CPP",
    "Behaviour",
    "FakeOpenAIServer",
    "Generation",
    "RecordedRequest",
    "ServerProfile",
    "closed_port",
    "fake_openai",
]


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
    released: threading.Event = field(default_factory=threading.Event)  # held requests go on
    default: Behaviour | None = None
    unscripted: int = 0
    profile: Any = field(default_factory=ServerProfile)  # .refusal(request, headers)
    slot: threading.Lock = field(default_factory=threading.Lock)
    generations: list[Generation] = field(default_factory=list)
    generated: threading.Condition = field(default_factory=threading.Condition)
    models: tuple[str, ...] | None = None  # answered at GET .../models when set


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
            refusal = state.profile.refusal(parsed, state.requests[-1].headers)
            if self.command == "GET" and self.path.endswith("/models") and state.models:
                listed = [{"id": m, "object": "model", "owned_by": "fake"} for m in state.models]
                behaviour = Behaviour.json({"object": "list", "data": listed})
            elif refusal is not None:
                behaviour = refusal  # refused before any scripted generation
            elif state.queue:
                behaviour = state.queue.popleft()
            elif state.default is not None:
                behaviour = state.default
            else:
                state.unscripted += 1
                behaviour = _UNSCRIPTED

        stream = isinstance(parsed, dict) and parsed.get("stream") is True
        single = getattr(state.profile, "single_slot", False)
        with state.slot if single else contextlib.nullcontext():
            # Interruptible, so stopping the server does not wait out a long delay.
            if behaviour.delay and state.stopping.wait(behaviour.delay):
                self.close_connection = True
                return
            if behaviour.held:
                state.released.wait()  # stop() sets it too
                if state.stopping.is_set():
                    self.close_connection = True
                    return
            try:
                if behaviour.content is not None and behaviour.token_delay:
                    self._generate(behaviour, stream)
                elif behaviour.content is not None and stream:
                    self._stream(behaviour, tokens_of(behaviour.content))
                else:
                    self._respond(behaviour)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout) while we were delaying: expected.
                self.close_connection = True

    def _generate(self, behaviour: Behaviour, stream: bool) -> None:
        """Token by token; streamed, each token is sent as it is made."""
        tokens = tokens_of(behaviour.content or "")
        state = self.server.state
        generated, client_left = 0, False
        try:
            if stream:
                generated = self._stream(behaviour, tokens, count=True)
            else:
                for _ in tokens:
                    if state.stopping.wait(behaviour.token_delay):
                        break
                    generated += 1
                self._respond(behaviour)
        except (BrokenPipeError, ConnectionResetError):
            client_left = True
            self.close_connection = True
        finally:
            with state.generated:
                state.generations.append(Generation(len(tokens), generated, client_left))
                state.generated.notify_all()

    def _stream(self, behaviour: Behaviour, tokens: list[str], *, count: bool = False) -> int:
        """Server-sent events as the behaviour's API sends them (OpenAI: one delta chunk per
        token, the finish reason, ``[DONE]``; Anthropic: ``message_start`` ...
        ``content_block_delta`` per token ... ``message_delta`` with the stop reason,
        ``message_stop``). Returns how many tokens were sent; raises when the client has
        gone."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0

        def event(name: str | None, payload: Any) -> None:
            data = b"event: " + name.encode() + b"\n" if name else b""
            data += b"data: " + (
                payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            )
            data += b"\n\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        opening, token_event, closing = DIALECTS[behaviour.dialect](behaviour.finish_reason)
        for name, payload in opening:
            event(name, payload)
        for token in tokens:
            if count and self.server.state.stopping.wait(behaviour.token_delay):
                return sent
            event(*token_event(token))
            sent += 1
        for name, payload in closing:
            event(name, payload)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        return sent

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

    def release(self) -> None:
        """Let every held request (``Behaviour.hold``) answer, now and from now on."""
        self._state.released.set()

    def stop(self) -> None:
        self._state.stopping.set()
        self._state.released.set()
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
    def profile(self) -> Any:
        """What the server refuses before generating (a :class:`ServerProfile`, or any
        object with ``refusal(request_json, headers) -> Behaviour | None``)."""
        return self._state.profile

    @profile.setter
    def profile(self, profile: Any) -> None:
        with self._state.lock:
            self._state.profile = profile

    def wait_requests(self, count: int, timeout: float = 30.0) -> list[RecordedRequest]:
        """Every request received, once there are at least ``count`` (a client may give up
        before the server's thread has read its request); a bound, not a measurement."""
        deadline = time.monotonic() + timeout
        while len(requests := self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return requests

    def wait_generations(self, count: int, timeout: float = 30.0) -> list[Generation]:
        """Block until ``count`` generations have ended (the server stopped working on
        them, finished or abandoned); a bound for a broken test, not a measurement."""
        with self._state.generated:
            if not self._state.generated.wait_for(
                lambda: len(self._state.generations) >= count, timeout
            ):
                raise AssertionError(f"fewer than {count} generations ended")
            return list(self._state.generations)

    @property
    def models(self) -> tuple[str, ...] | None:
        """The model ids a ``GET .../models`` lists, as Ollama and llama.cpp answer it
        (None: that request is scripted like any other)."""
        return self._state.models

    @models.setter
    def models(self, models: tuple[str, ...] | None) -> None:
        with self._state.lock:
            self._state.models = models

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
