"""Asking a running server's sweeper to queue the summary backlog now (pure: paths and
mtimes): an import touches the request file; the sweeper thread, the one that must be
alive to answer, beats its heartbeat here every ``TICK_S``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from transcripts.core.fsutil import touched_within

TICK_S = 1.0  # how often a server's sweeper looks for a request (and beats)
FRESH_S = 5.0  # a heartbeat older than this: no sweeper is running
HEARTBEAT = ".sweeper"
REQUEST = "sweep"


def sweeper_beat(folder: Path) -> None:
    """The sweeper is alive: bump the heartbeat's mtime (created at first)."""
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / HEARTBEAT
    try:
        os.utime(path, follow_symlinks=False)
    except FileNotFoundError:
        path.touch(mode=0o600)


def sweeper_alive(folder: Path, now: float) -> bool:
    return touched_within(folder / HEARTBEAT, FRESH_S, now)


def sweeper_gone(folder: Path) -> None:
    """At the server's exit: an import run now hands nothing to a sweeper that is gone."""
    with contextlib.suppress(OSError):
        (folder / HEARTBEAT).unlink()


def sweep_request(folder: Path) -> None:
    """Ask the running sweeper to sweep (requests coalesce: one file)."""
    folder.mkdir(mode=0o700, exist_ok=True)
    (folder / REQUEST).touch(mode=0o600)


def sweep_request_take(folder: Path) -> bool:
    """True once per request: the sweeper removes it before it sweeps, so a request made
    during the sweep is answered by the next one."""
    try:
        (folder / REQUEST).unlink()
    except FileNotFoundError:
        return False
    return True
