"""A scripted OpenAI-compatible (or Anthropic Messages) model server, run as its own
process on loopback so the client under test and the server never share a process:
a reset, a client that leaves mid-generation, a server that keeps generating after it
left, all cross a real socket between two processes, as in production.

    python -m tests.fakes.model_server --fd 3      # serve on an inherited listening socket
    python -m tests.fakes.model_server             # bind 127.0.0.1:0, print "port N"

The test drives it through ``tests.summaries.fake_openai_server.FakeOpenAIServer``, which
speaks to the control endpoints under ``/_fake/`` (never recorded as requests):

- ``POST /_fake/enqueue`` ``{"behaviours": [...]}``: each model request pops the next one;
- ``POST /_fake/default`` ``{"behaviour": ... | null}``: served once the queue is empty;
- ``POST /_fake/profile`` (a profile's wire form): what is refused before generating;
- ``POST /_fake/models`` ``{"models": [...] | null}``: what ``GET .../models`` lists;
- ``POST /_fake/release`` ``{"count": n}``: lets ``n`` more held requests answer;
- ``GET /_fake/state``: the recorded requests and the counters;
- ``GET /_fake/generations?count=n&timeout=s``: blocks until ``n`` generations ended.

An empty queue without a default answers HTTP 500 ``fake_server_unscripted`` (counted),
so a test that sends more requests than it planned notices. Every request is recorded
before its behaviour runs, so a request the client gave up on still counts.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import os
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.behaviour import (
    DIALECTS,
    Behaviour,
    Generation,
    Profile,
    ServerProfile,
    profile_from_wire,
    tokens_of,
)

CONTROL = "/_fake/"
_UNSCRIPTED = Behaviour.error(500, code="fake_server_unscripted", message="no behaviour scripted")


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: deque[Behaviour] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)  # wire form, oldest first
    default: Behaviour | None = None
    unscripted: int = 0
    profile: Profile = field(default_factory=ServerProfile)
    slot: threading.Lock = field(default_factory=threading.Lock)
    generations: list[Generation] = field(default_factory=list)
    generated: threading.Condition = field(default_factory=threading.Condition)
    models: list[str] | None = None
    # held requests: each takes the next ticket; ticket t answers once released > t
    held: threading.Condition = field(default_factory=threading.Condition)
    tickets: int = 0
    released: int = 0
    answered: int = 0  # held requests answered


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
        if self.path.startswith(CONTROL):
            self._control(parsed)
            return
        state = self.server.state
        headers = {k.lower(): v for k, v in self.headers.items()}
        record: dict[str, Any] = {
            "method": self.command,
            "path": self.path,
            "headers": headers,
            "body": base64.b64encode(body).decode(),
            "received_at": time.monotonic(),  # CLOCK_MONOTONIC: system-wide
            "upstream_status": None,
            "upstream_error": None,
            "upstream_bytes": 0,
        }
        with state.lock:
            state.requests.append(record)
            refusal = state.profile.refusal(parsed, headers)
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
            # taken with the recording, so tickets follow the order of ``requests``
            ticket = state.tickets
            state.tickets += behaviour.hold

        if behaviour.hold:
            with state.held:
                state.held.wait_for(lambda: state.released > ticket)

        stream = isinstance(parsed, dict) and parsed.get("stream") is True
        single = getattr(state.profile, "single_slot", False)
        with state.slot if single else contextlib.nullcontext():
            if behaviour.delay:
                time.sleep(behaviour.delay)
            try:
                if behaviour.forward is not None:
                    self._forward(behaviour.forward, body, record)
                elif behaviour.content is not None and behaviour.token_delay:
                    self._generate(behaviour, stream)
                elif behaviour.content is not None and stream:
                    self._stream(behaviour, tokens_of(behaviour.content))
                else:
                    self._respond(behaviour)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout) while we were delaying: expected.
                self.close_connection = True
                return
        if behaviour.hold:
            with state.held:
                state.answered += 1
                state.held.notify_all()

    def _control(self, parsed: Any) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        action = url.path[len(CONTROL) :]
        payload: Any = {}
        with state.lock:
            if action == "enqueue":
                state.queue.extend(Behaviour.from_wire(b) for b in parsed["behaviours"])
            elif action == "default":
                wire = parsed["behaviour"]
                state.default = None if wire is None else Behaviour.from_wire(wire)
            elif action == "profile":
                state.profile = profile_from_wire(parsed)
            elif action == "models":
                state.models = parsed["models"]
            elif action == "state":
                payload = {
                    "requests": state.requests,
                    "pending": len(state.queue),
                    "unscripted": state.unscripted,
                    "answered": state.answered,
                }
            elif action not in ("release", "generations"):
                self._reply_json(404, {"error": f"no control action {action!r}"})
                return
        if action == "release":
            with state.held:
                state.released += int(parsed["count"])
                state.held.notify_all()
        elif action == "generations":
            query = parse_qs(url.query)
            count, timeout = int(query["count"][0]), float(query["timeout"][0])
            with state.generated:
                state.generated.wait_for(lambda: len(state.generations) >= count, timeout)
                payload = {"generations": [asdict(g) for g in state.generations]}
        self._reply_json(200, payload)

    def _reply_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _forward(self, upstream: str, body: bytes, record: dict[str, Any]) -> None:
        """Relay to the real server and stream its answer back as it comes (chunked), so
        the client's read timeouts see the real server's pace."""
        target = urlsplit(upstream)
        conn = http.client.HTTPConnection(target.hostname or "", target.port, timeout=900)
        skip = {"host", "content-length", "connection", "accept-encoding"}
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
            conn.request(self.command, target.path + self.path, body or None, headers)
            answer = conn.getresponse()
            with self.server.state.lock:
                record["upstream_status"] = answer.status
            if answer.status >= 400:  # an error body is small: kept for the test to read
                error = answer.read(64 * 1024)
                with self.server.state.lock:
                    record["upstream_error"] = error.decode("utf-8", "replace")
                self._respond(Behaviour.raw(error, status=answer.status))
                return
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while piece := answer.read1(64 * 1024):
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
                with self.server.state.lock:
                    record["upstream_bytes"] += len(piece)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        finally:
            conn.close()

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
                    time.sleep(behaviour.token_delay)
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
            if count:
                time.sleep(behaviour.token_delay)
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


def _exit_with_parent() -> None:
    """Its own session keeps it out of the test's signals, so a test process that dies
    (a timeout, a kill -9) would leave it serving forever: it leaves with its parent."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def serve(listening: socket.socket) -> None:
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    server = _Server(listening.getsockname(), _Handler, bind_and_activate=False)
    server.socket.close()
    server.socket = listening
    server.state = _State()
    server.serve_forever(poll_interval=0.05)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fd", type=int, help="an inherited socket, already listening")
    args = parser.parse_args(argv)
    if args.fd is not None:
        listening = socket.socket(fileno=args.fd)
    else:
        listening = socket.create_server(("127.0.0.1", 0))
        print(f"port {listening.getsockname()[1]}", flush=True)
    serve(listening)


if __name__ == "__main__":
    main()
