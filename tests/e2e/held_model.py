"""The loopback model server (``tests.fakes.model_server``, a process of its own) holding
every request until the test releases it, in arrival order. Each request is told apart by
which session it was about (a ``tag-<app>-<n>`` word the test put in that session's user
turn). Ordering, not timing: the test sees which pass reached the model next."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

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
    def __init__(self, server: FakeOpenAIServer) -> None:
        self._server = server

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def arrived(self) -> list[str]:
        """The tag of each model request, in arrival order."""
        posts = [r for r in self._server.requests if r.method == "POST"]
        return [
            m.group(0) if (m := TAG.search(r.body.decode("utf-8", "replace"))) else "?"
            for r in posts
        ]

    @property
    def answered(self) -> int:
        return self._server.answered

    def release(self, count: int = 1) -> None:
        self._server.release(count)

    def release_all(self) -> None:
        self.release(10_000)

    def wait_arrivals(self, count: int, within: float = 60.0) -> list[str]:
        deadline = time.monotonic() + within
        while len(arrived := self.arrived) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} model requests expected, saw {arrived}")
            time.sleep(0.05)
        return arrived


@contextmanager
def held_model() -> Iterator[HeldModel]:
    with FakeOpenAIServer() as server:
        server.default = Behaviour.held(Behaviour.reply(REPLY))
        yield HeldModel(server)
