"""A full summary queue: a command waits for room, a server thread drops (issue 14's import
of 500 sessions lost every pass beyond ``KIROCREW_SUMMARY_QUEUE``)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from summaries.worker import summary_submit, summary_worker_drain

SLOTS = [f"bulk-{i}" for i in range(8)]
# A pass thread closes stale database connections before it runs.
pytestmark = pytest.mark.django_db


class SlowPasses:
    """One worker, a queue of two, and passes that wait on ``gate`` before recording."""

    def __init__(self, settings: Any) -> None:
        settings.KIROCREW_SUMMARY_WORKERS = 1
        settings.KIROCREW_SUMMARY_QUEUE = 2
        self.ran: list[str] = []
        self.gate = threading.Event()

    def run(self, slot_name: str) -> None:
        self.gate.wait(timeout=30)
        self.ran.append(slot_name)


@pytest.fixture
def slow(settings: Any, summary_worker: None) -> SlowPasses:
    return SlowPasses(settings)


def test_outside_a_request_a_full_queue_makes_the_caller_wait(slow: SlowPasses) -> None:
    threading.Timer(0.3, slow.gate.set).start()  # the first pass holds the only worker a while
    accepted = [summary_submit(name, slow.run) for name in SLOTS]  # as import_transcripts does
    assert accepted == [True] * len(SLOTS)
    assert summary_worker_drain(timeout=60)
    assert sorted(slow.ran) == sorted(SLOTS)  # every session got its pass


def test_a_thread_running_an_event_loop_drops_instead_of_blocking(slow: SlowPasses) -> None:
    async def from_the_loop() -> list[bool]:
        return [summary_submit(name, slow.run) for name in SLOTS]

    try:
        accepted = asyncio.run(from_the_loop())
    finally:
        slow.gate.set()
    # one running, two queued, the rest dropped at once (a loop thread never stalls)
    assert accepted.count(True) <= 3
    assert False in accepted
    assert summary_worker_drain(timeout=60)
    assert len(slow.ran) == accepted.count(True)
