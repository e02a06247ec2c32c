"""An import's request that the running server sweep the summary backlog (the pure part:
the request file and the sweeper's heartbeat)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from summaries.core.sweep_request import (
    FRESH_S,
    sweep_request,
    sweep_request_take,
    sweeper_alive,
    sweeper_beat,
    sweeper_gone,
)


def test_a_request_is_answered_once_and_requests_made_before_it_coalesce(tmp_path: Path) -> None:
    folder = tmp_path / "summaries"
    assert not sweep_request_take(folder)  # no folder, no request
    sweep_request(folder)
    sweep_request(folder)
    assert sweep_request_take(folder)
    assert not sweep_request_take(folder)


def test_no_sweeper_is_alive_before_its_beat_after_its_exit_or_when_it_stopped_beating(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "summaries"
    now = time.time()
    assert not sweeper_alive(folder, now)
    sweeper_beat(folder)
    assert sweeper_alive(folder, time.time())
    old = now - FRESH_S - 1
    os.utime(folder / ".sweeper", (old, old))  # a server killed with -9 stops beating
    assert not sweeper_alive(folder, now)
    sweeper_beat(folder)
    assert sweeper_alive(folder, time.time())
    sweeper_gone(folder)
    assert not sweeper_alive(folder, time.time())
