"""A real HTTP server on loopback that speaks (enough of) OpenAI chat completions, in a
process of its own (``tests.fakes.model_server``): this is the test's handle on it.

Tests script what each incoming request gets and then assert on what the client
actually sent, over a real socket between two processes: timeouts, refused and dropped
connections and oversize bodies behave as they do in production, which a mocked function
or an ``httpx.MockTransport`` cannot show.

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

import base64
import http.client
import json
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.processes import Proc
from tests.fakes.behaviour import (
    LLAMA_CPP,
    Behaviour,
    Generation,
    Profile,
    ServerProfile,
    profile_from_wire,
    profile_to_wire,
)

__all__ = [
    "LLAMA_CPP",
    "Behaviour",
    "FakeOpenAIServer",
    "Generation",
    "RecordedRequest",
    "ServerProfile",
    "closed_port",
    "fake_model_spares",
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
    upstream_status: int | None  # what the real server answered a forwarded request
    upstream_error: str | None  # and its error body, when it refused
    upstream_bytes: int  # how many body bytes it relayed back

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> RecordedRequest:
        body = base64.b64decode(wire["body"])
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        return cls(
            method=wire["method"],
            path=wire["path"],
            headers=wire["headers"],
            body=body,
            json=parsed,
            received_at=wire["received_at"],
            upstream_status=wire["upstream_status"],
            upstream_error=wire["upstream_error"],
            upstream_bytes=wire["upstream_bytes"],
        )


class FakeOpenAIServer:
    """The scriptable server; ``base_url`` ends in ``/v1`` like a real one.

    The listening socket is bound here and handed to the child, so the port is known
    (and connections wait in its backlog) before the child has even started."""

    def __init__(self) -> None:
        self._listening = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listening.getsockname()[1])
        self._logs = Path(tempfile.mkdtemp(prefix="fake-model-"))
        self._proc: Proc | None = None
        self._default: Behaviour | None = None
        self._profile: Profile = ServerProfile()
        self._models: tuple[str, ...] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        fd = self._listening.fileno()
        argv = [sys.executable, "-m", "tests.fakes.model_server", "--fd", str(fd)]
        self._proc = Proc("model-server", argv, {"PYTHONUNBUFFERED": "1"}, self._logs, (fd,))
        self._listening.close()  # the child holds it now
        return self

    def stop(self) -> None:
        """Kill the server process (a held or slow request ends with it)."""
        if self._proc is not None:
            self._proc.kill()
        self._listening.close()
        shutil.rmtree(self._logs, ignore_errors=True)

    def kill(self) -> None:
        """SIGKILL the server process, as a crashed model server dies: its connections
        close, and its port refuses from then on."""
        if self._proc is not None:
            self._proc.kill()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _control(self, action: str, payload: Any = None, *, timeout: float = 30.0) -> Any:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            body = None if payload is None else json.dumps(payload)
            conn.request("GET" if body is None else "POST", f"/_fake/{action}", body)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        if response.status != 200:
            output = self._proc.output() if self._proc else ""
            raise AssertionError(f"fake model server: {action} -> {response.status}\n{output}")
        return json.loads(data)

    def enqueue(self, *behaviours: Behaviour) -> None:
        """Append behaviours; each request consumes one, in order."""
        self._control("enqueue", {"behaviours": [b.to_wire() for b in behaviours]})

    @property
    def default(self) -> Behaviour | None:
        """Served once the queue is empty (``None``: an "unscripted" 500)."""
        return self._default

    @default.setter
    def default(self, behaviour: Behaviour | None) -> None:
        self._control("default", {"behaviour": behaviour and behaviour.to_wire()})
        self._default = behaviour

    def _state(self) -> dict[str, Any]:
        return dict(self._control("state"))

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        return [RecordedRequest.from_wire(r) for r in self._state()["requests"]]

    @property
    def pending(self) -> int:
        """Scripted behaviours not consumed yet."""
        return int(self._state()["pending"])

    @property
    def unscripted(self) -> int:
        """Requests that found neither a scripted behaviour nor a default."""
        return int(self._state()["unscripted"])

    @property
    def answered(self) -> int:
        """Held requests answered so far."""
        return int(self._state()["answered"])

    def wait_requests(self, count: int, timeout: float = 30.0) -> list[RecordedRequest]:
        """The requests once at least ``count`` have arrived (or all there are at the
        timeout): a client may give up before the server has read its request."""
        deadline = time.monotonic() + timeout
        while len(got := self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return got

    def release(self, count: int = 1) -> None:
        """Let the next ``count`` held requests (in arrival order, arrived or not) answer."""
        self._control("release", {"count": count})

    @property
    def profile(self) -> Profile:
        """What the server refuses before generating (a :class:`ServerProfile` or an
        ``AnthropicRules``)."""
        return self._profile

    @profile.setter
    def profile(self, profile: Profile) -> None:
        self._control("profile", profile_to_wire(profile))
        self._profile = profile_from_wire(profile_to_wire(profile))

    def wait_generations(self, count: int, timeout: float = 30.0) -> list[Generation]:
        """Block until ``count`` generations have ended (the server stopped working on
        them, finished or abandoned); a bound for a broken test, not a measurement."""
        query = f"generations?count={count}&timeout={timeout}"
        ended = [Generation(**g) for g in self._control(query, timeout=timeout + 10)["generations"]]
        if len(ended) < count:
            raise AssertionError(f"fewer than {count} generations ended")
        return ended

    @property
    def models(self) -> tuple[str, ...] | None:
        """The model ids a ``GET .../models`` lists, as Ollama and llama.cpp answer it
        (None: that request is scripted like any other)."""
        return self._models

    @models.setter
    def models(self, models: tuple[str, ...] | None) -> None:
        self._control("models", {"models": None if models is None else list(models)})
        self._models = models


def closed_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Spares:
    """One server started ahead: its process boots (about a second on a loaded machine)
    while the test before runs, so a test pays for no boot. Each test still gets a new
    process of its own."""

    def __init__(self) -> None:
        self._next: FakeOpenAIServer | None = None

    def take(self) -> FakeOpenAIServer:
        server = self._next if self._next is not None else FakeOpenAIServer().start()
        self._next = FakeOpenAIServer().start()
        return server

    def close(self) -> None:
        if self._next is not None:
            self._next.stop()


@pytest.fixture(scope="session")
def fake_model_spares() -> Iterator[_Spares]:
    spares = _Spares()
    yield spares
    spares.close()


@pytest.fixture
def fake_openai(fake_model_spares: _Spares) -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` on 127.0.0.1, stopped after the test."""
    server = fake_model_spares.take()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_model(settings: Any, fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    """The site's summaries from ``openai:test-model`` on :func:`fake_openai`: no key,
    the one retry at once (production waits half a second), and a timeout only a held
    request ever reaches."""
    settings.KIROCREW_SUMMARY_MODEL = "openai:test-model"
    settings.KIROCREW_OPENAI_BASE_URL = fake_openai.base_url
    settings.KIROCREW_OPENAI_API_KEY = ""
    settings.KIROCREW_OPENAI_TIMEOUT = 60.0
    settings.KIROCREW_OPENAI_RETRY_BACKOFF = 0.0
    return fake_openai
