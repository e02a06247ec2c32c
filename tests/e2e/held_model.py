"""A loopback OpenAI-compatible model server that holds every request until the test
releases it, recording which session each request was about (a ``tag-<app>-<n>`` word
the test put in that session's user turn). Ordering, not timing: the test sees which
pass reached the model next."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TAG = re.compile(r"tag-[a-z]+-\d+")
REPLY = json.dumps(
    {
        "intents": [
            {
                "title": "Fix the flaky login test",
                "ranges": [[1, 1]],
                "status": "completed",
                "verified": True,
                "origin_turn": None,
                "initial_intent": "The user asked to fix the flaky login test.",
                "progress": ["Fixed and tested."],
                "next_steps": [],
            }
        ],
        "constraints": [],
    }
)


class HeldModel:
    def __init__(self) -> None:
        self.arrived: list[str] = []  # the tag of each request, in arrival order
        self.answered = 0
        self._released = 0
        self._cond = threading.Condition()
        self._stopping = False
        held = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                found = TAG.search(body.decode("utf-8", "replace"))
                with held._cond:
                    held.arrived.append(found.group(0) if found else "?")
                    index = len(held.arrived) - 1
                    held._cond.notify_all()
                    held._cond.wait_for(lambda: held._stopping or held._released > index)
                payload = {
                    "id": "chatcmpl-held",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "held",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": REPLY},
                            "finish_reason": "stop",
                        }
                    ],
                }
                data = json.dumps(payload).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    return
                with held._cond:
                    held.answered += 1
                    held._cond.notify_all()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def release(self, count: int = 1) -> None:
        with self._cond:
            self._released += count
            self._cond.notify_all()

    def release_all(self) -> None:
        self.release(10_000)

    def wait_arrivals(self, count: int, within: float = 60.0) -> list[str]:
        deadline = time.monotonic() + within
        with self._cond:
            while len(self.arrived) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{count} model requests expected, saw {self.arrived}")
                self._cond.wait(left)
            return list(self.arrived)


@contextmanager
def held_model() -> Iterator[HeldModel]:
    model = HeldModel()
    thread = threading.Thread(target=model._httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        with model._cond:
            model._stopping = True
            model._cond.notify_all()
        model._httpd.shutdown()
        model._httpd.server_close()
