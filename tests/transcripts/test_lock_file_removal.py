"""A deleted session's ``.lock`` file goes, and removing it never lets two writers in.

The race: a writer in another process opened the lock file and waits while the delete
holds it. The delete unlinks the file and unlocks; the waiter now owns a lock on an inode
no path names, while a newcomer creating the file anew would lock another one. The
waiter must notice and start over on the path's current file (``locking._flock``).
Real processes, real ``flock``: the probe is this process opening the path as any writer
would, while the waiter says it is inside.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.transcripts.helpers import KEY, make_store

PROJECT = Path(__file__).resolve().parents[2]

# Takes the lock, creates INSIDE, stays in until GO exists (at most 60 s), exits 0.
_WAITER = """
import os, sys, time
from transcripts.core import locking
lock, inside, go = sys.argv[1:4]
with locking.hold(lock, timeout=60):
    open(inside, "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.01)
"""


def _has_open(pid: int, path: Path) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(fds / name) == str(path) for name in os.listdir(fds))
    except FileNotFoundError:
        return False


def _wait(what: str, check, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert proc.poll() is None, f"the waiter exited while waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _newcomer_gets_in(lock: Path) -> bool:
    """Open the lock file as any writer does and try to take it without waiting."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def test_delete_removes_the_lock_file(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "hello")
    assert store.lock_path(KEY).exists()

    assert store.delete(KEY) is True

    assert not store.lock_path(KEY).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.timeout(120)
def test_a_writer_waiting_on_a_deleted_lock_file_never_shares_the_lock(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "hello")
    lock = store.lock_path(KEY)
    inside, go = tmp_path / "inside", tmp_path / "go"
    waiter = subprocess.Popen(
        [sys.executable, "-c", _WAITER, str(lock), str(inside), str(go)],
        cwd=PROJECT,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    try:
        with store.locked(KEY):
            _wait("the waiter to open the lock file", lambda: _has_open(waiter.pid, lock), waiter)
            assert store.delete(KEY) is True
            # Inside an outer hold the file stays until that hold ends: the holder's
            # critical section is not over yet.
            assert lock.exists()
        _wait("the waiter to get in", inside.exists, waiter)

        assert not _newcomer_gets_in(lock)  # the waiter holds the file the path names

        go.touch()
        assert waiter.wait(timeout=60) == 0
    finally:
        go.touch()
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert _newcomer_gets_in(lock)  # released: the next writer takes it at once
