"""Fixtures for the summary pass: a recording backend that stands in for the model (counts
calls, blocks, raises, or runs a callback in the middle of the "model call") and a push
recorder. The enabled config and the slots with clean exchanges come from
``tests/fixtures``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pytest

from summaries.core.transcript_turn import TranscriptTurn
from summaries.signals import summary_stored
from tests.fixtures.summaries import use_backend

INTENT = {
    "title": "Fix the flaky login test",
    "ranges": [[1, 2]],
    "status": "completed",
    "verified": True,
    "origin_turn": None,
    "initial_intent": "The login test failed one run in five on CI.",
    "progress": ["The race in the session fixture is fixed; the test passes 50 runs."],
    "next_steps": [{"what": "Merge the fix", "why": "CI is red", "expect": "green CI"}],
    # the person's second turn: what the checks accept as the confirmation behind verified
    "cites": ["U2"],
}
# Stated by the fixture's exchanges ("... (ticket LOGIN-100)"): the checks keep it.
CONSTRAINT = "Login bugs are filed as LOGIN-100 style tickets"
VALID_REPLY = json.dumps({"intents": [INTENT], "constraints": [CONSTRAINT]})
T = TypeVar("T")
OTHER_REPLY = json.dumps(
    {"intents": [{**INTENT, "title": "Something else entirely"}], "constraints": []}
)


def must(value: T | None) -> T:
    """``value``, asserted present (narrows the Optional for the reader and for mypy)."""
    assert value is not None
    return value


class RecordingBackend:
    """A SummaryBackend whose ``generate`` is scripted by the test.

    ``reply`` is returned; ``raises`` is raised instead; ``gate`` (an Event) makes the
    call wait until the test sets it; ``during`` runs inside the call, i.e. while the
    "model" thinks, which is where a real append, delete or rewrite would land.
    """

    name = "recording"

    def __init__(self) -> None:
        self.reply: Any = VALID_REPLY
        self.raises: BaseException | None = None
        self.gate: threading.Event | None = None
        self.during: Callable[[], None] | None = None
        self.entered = threading.Event()
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.prompts)

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        with self._lock:
            self.prompts.append(prompt)
        self.entered.set()
        if self.gate is not None and not self.gate.wait(timeout=30):
            raise AssertionError("the test never released the blocked model call")
        if self.during is not None:
            self.during()
        if self.raises is not None:
            raise self.raises
        return self.reply  # type: ignore[no-any-return]


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> RecordingBackend:
    recording = RecordingBackend()
    use_backend(monkeypatch, recording)
    return recording


class PushRecorder:
    """Records ``summary_stored`` (what the realtime app turns into the panel's frame)."""

    def __init__(self) -> None:
        self.slots: list[str] = []

    def __call__(self, sender: Any, *, slot_name: str, **_: Any) -> None:
        self.slots.append(slot_name)


@pytest.fixture
def pushes() -> Iterator[PushRecorder]:
    recorder = PushRecorder()
    summary_stored.connect(recorder, weak=False)
    try:
        yield recorder
    finally:
        summary_stored.disconnect(recorder)
