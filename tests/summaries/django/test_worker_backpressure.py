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


def _slow_recorder(ran: list[str], gate: threading.Event) -> Any:
    def run(slot_name: str) -> None:
        gate.wait(timeout=30)
        ran.append(slot_name)

    return run


def test_outside_a_request_a_full_queue_makes_the_caller_wait(
    settings: Any, summary_worker: None
) -> None:
    settings.KIROCREW_SUMMARY_WORKERS = 1
    settings.KIROCREW_SUMMARY_QUEUE = 2
    ran: list[str] = []
    gate = threading.Event()
    run = _slow_recorder(ran, gate)
    threading.Timer(0.3, gate.set).start()  # the first pass holds the only worker a while
    accepted = [summary_submit(name, run) for name in SLOTS]  # as import_transcripts does
    assert accepted == [True] * len(SLOTS)
    assert summary_worker_drain(timeout=60)
    assert sorted(ran) == sorted(SLOTS)  # every session got its pass


def test_a_thread_running_an_event_loop_drops_instead_of_blocking(
    settings: Any, summary_worker: None
) -> None:
    settings.KIROCREW_SUMMARY_WORKERS = 1
    settings.KIROCREW_SUMMARY_QUEUE = 2
    ran: list[str] = []
    gate = threading.Event()
    run = _slow_recorder(ran, gate)

    async def from_the_loop() -> list[bool]:
        return [summary_submit(name, run) for name in SLOTS]

    try:
        accepted = asyncio.run(from_the_loop())
    finally:
        gate.set()
    # one running, two queued, the rest dropped at once (a loop thread never stalls)
    assert accepted.count(True) <= 3
    assert False in accepted
    assert summary_worker_drain(timeout=60)
    assert len(ran) == accepted.count(True)
