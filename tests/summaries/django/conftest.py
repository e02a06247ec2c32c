"""Fixtures for the summary pass: an enabled config, slots with clean exchanges, and a
recording backend that stands in for the model (counts calls, blocks, raises, or runs a
callback in the middle of the "model call")."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from summaries.core.turns import TranscriptTurn
from summaries.push import register_sender, unregister_sender
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import session_append_row, session_create
from transcripts.store import get_store

INTENT = {
    "title": "Fix the flaky login test",
    "ranges": [[1, 2]],
    "status": "completed",
    "verified": True,
    "origin_turn": None,
    "initial_intent": "The login test failed one run in five on CI.",
    "progress": ["The race in the session fixture is fixed; the test passes 50 runs."],
    "next_steps": [{"what": "Merge the fix", "why": "CI is red", "expect": "green CI"}],
}
VALID_REPLY = json.dumps({"intents": [INTENT], "constraints": ["Run tests with -p no:cache"]})
T = TypeVar("T")
OTHER_REPLY = json.dumps(
    {"intents": [{**INTENT, "title": "Something else entirely"}], "constraints": []}
)


def must(value: T | None) -> T:
    """``value``, asserted present (narrows the Optional for the reader and for mypy)."""
    assert value is not None
    return value


def exchange(i: int) -> tuple[str, str]:
    """The i-th clean exchange: a distinct request and its answer."""
    return (
        f"Please fix bug number {i} in the login flow (ticket LOGIN-{100 + i}).",
        f"Fixed bug {i}: the session cookie was read before it was set. Tests pass.",
    )


def add_exchanges(slot: Slot, count: int, *, start: int = 0) -> None:
    """Append ``count`` user/assistant exchanges through the transcript services."""
    for i in range(start, start + count):
        question, answer = exchange(i)
        session_append_row(key=slot.session.key, role="user", content=question)
        session_append_row(key=slot.session.key, role="assistant", content=answer)


def write_config(path: Path, **section: Any) -> None:
    """Replace config.json and make sure its identity (mtime) visibly changes."""
    try:
        previous = path.stat().st_mtime_ns
    except FileNotFoundError:
        previous = 0
    path.write_text(json.dumps({"session_summary": section}))
    stamp = max(time.time_ns(), previous + 1_000_000)
    os.utime(path, ns=(stamp, stamp))


@pytest.fixture
def store(kirocrew_home: Path, settings: Any) -> TranscriptStore:
    settings.TRANSCRIPT_FSYNC = "never"
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    return get_store()


@pytest.fixture(autouse=True)
def _clean_summary_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's shell must not decide whether a test's summaries are on."""
    for var in (
        "KIROCREW_SUMMARY_ENABLED",
        "KIROCREW_SUMMARY_MIN_USER_TURNS",
        "KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS",
        "KIROCREW_SUMMARY_MAX_INTENTS",
        "KIROCREW_SUMMARY_MAX_CONSTRAINTS",
        "KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def configure(store: TranscriptStore, settings: Any) -> Callable[..., Path]:
    """``configure(enabled=True, min_user_turns=3, …)`` writes the session_summary section."""
    path = Path(settings.KIROCREW_CONFIG_PATH)

    def apply(**section: Any) -> Path:
        write_config(path, **section)
        return path

    return apply


@pytest.fixture
def enabled_summaries(configure: Callable[..., Path]) -> Path:
    return configure(enabled=True)


@pytest.fixture
def make_slot(store: TranscriptStore, db: None) -> Callable[..., Slot]:
    """A slot with ``turns`` clean exchanges whose last turn ended with ``stop_reason``."""

    def make(
        name: str = "s1",
        *,
        turns: int = 2,
        memory_mode: str = "",
        stop_reason: str = "end_turn",
    ) -> Slot:
        slot = session_create(name=name, memory_mode=memory_mode, app=None)
        add_exchanges(slot, turns)
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason=stop_reason)
        slot.refresh_from_db()
        return slot

    return make


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
    monkeypatch.setattr("summaries.services.summary_backend", lambda: recording)
    return recording


class PushRecorder:
    def __init__(self) -> None:
        self.slots: list[str] = []

    def __call__(self, slot_name: str) -> None:
        self.slots.append(slot_name)


@pytest.fixture
def pushes() -> Iterator[PushRecorder]:
    recorder = PushRecorder()
    register_sender(recorder)
    try:
        yield recorder
    finally:
        unregister_sender(recorder)
