"""Per-transcript mutual exclusion: a process-wide RLock plus ``flock`` on ``<file>.lock``.

Never on the data file: rotation and metadata edits replace its inode, and a lock on a
replaced inode excludes nobody. ``flock``, not ``fcntl``/``lockf``: POSIX record locks
vanish when any descriptor of the file is closed anywhere in the process. The flock is
taken once per outermost entry (a second open + flock in the same thread would block on
itself). After ``fork()`` the child starts with a fresh registry, and removing a lock file
(``remove_when_released``) is safe by two rules: only its holder unlinks it, as its last
act, and a taker re-checks that the path still names the inode it locked (docs/DESIGN.md,
"Locks after fork()" and "A deleted slot's .lock file goes").
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from .errors import LockTimeout

DEFAULT_TIMEOUT_S = 10.0
# A writer holds the lock for well under a millisecond: poll fast at first, then back off
# (0.1 ms doubling to 5 ms), so a waiter neither sleeps through many appends nor spins.
POLL_FIRST_S = 0.0001
POLL_MAX_S = 0.005


@dataclass
class _Entry:
    rlock: threading.RLock = field(default_factory=threading.RLock)
    depth: int = 0
    fd: int | None = None
    remove: bool = False  # unlink the lock file at the outermost release


_registry: defaultdict[str, _Entry] = defaultdict(_Entry)
_registry_guard = threading.Lock()


def _reset_after_fork() -> None:
    global _registry, _registry_guard
    for entry in _registry.values():
        if entry.fd is not None:
            # The child's copy shares the parent's open file description; closing it
            # does not release the parent's flock (other descriptors keep it alive).
            with suppress(OSError):
                os.close(entry.fd)
    _registry = defaultdict(_Entry)
    _registry_guard = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)


def _entry(lock_path: str) -> _Entry:
    with _registry_guard:
        return _registry[lock_path]


@contextmanager
def hold(lock_path: str, timeout: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """Hold the transcript's lock; reentrant within a thread; LockTimeout after ``timeout``."""
    entry = _entry(lock_path)
    if not entry.rlock.acquire(timeout=timeout):
        raise LockTimeout(f"timed out waiting for {lock_path} (in-process)")
    try:
        if entry.depth == 0:
            entry.fd = _flock(lock_path, timeout)
        entry.depth += 1
        try:
            yield
        finally:
            entry.depth -= 1
            if entry.depth == 0 and entry.fd is not None:
                fd, entry.fd = entry.fd, None
                if entry.remove:
                    entry.remove = False
                    with suppress(FileNotFoundError):
                        os.unlink(lock_path)  # still locked: see the module docstring
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
    finally:
        entry.rlock.release()


def remove_when_released(lock_path: str) -> None:
    """Unlink the lock file when this thread's outermost ``hold`` of it ends (a deleted
    session's). Only valid inside ``hold(lock_path)``: the removal is the holder's."""
    entry = _entry(lock_path)
    if entry.depth == 0:
        raise RuntimeError(f"remove_when_released({lock_path!r}) outside hold()")
    entry.remove = True


def _flock(lock_path: str, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while True:
        fd = _flock_file(lock_path, deadline)
        if fd is None:
            return None
        held = os.fstat(fd)
        with suppress(FileNotFoundError):
            linked = os.stat(lock_path)
            if (held.st_dev, held.st_ino) == (linked.st_dev, linked.st_ino):
                return fd
        # Its holder removed the file while we waited (a deleted session): the inode we
        # locked excludes nobody now. Start over on the path's current file.
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _flock_file(lock_path: str, deadline: float) -> int | None:
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno != errno.EROFS:
            raise
        # A read-only store: flock works on a read-only descriptor, and where no lock file
        # exists there is nobody to exclude (nothing can write here). Reads go on; a write
        # fails on its own open with EROFS.
        try:
            fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
    try:
        wait_flock(fd, deadline, f"timed out waiting for {lock_path}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def wait_flock(fd: int, deadline: float, timeout_message: str) -> None:
    """``flock(fd)`` exclusively, polling until ``deadline`` (``time.monotonic``), then
    ``LockTimeout(timeout_message)``."""
    pause = POLL_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(timeout_message) from None
            time.sleep(pause)
            pause = min(pause * 2, POLL_MAX_S)
