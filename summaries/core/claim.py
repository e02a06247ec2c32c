"""At most one summary pass per session at a time: an exclusive ``flock`` on
``.intents/<safe_key>.claim``, taken without waiting and held by an open descriptor for
the whole pass. The kernel drops it however the pass ends (kill -9, the OOM killer), and
no expiry can let a second pass start beside a slow one (a database marker expired after
600 s against up to ~1,200 s of model time). ``flock``, not ``fcntl`` record locks: those
vanish when any descriptor of the file is closed anywhere in the process.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from .sidecar import claim_path, wanted_path


def pass_wanted_mark(root: Path, key: str) -> None:
    """Made by every pass before it tries the claim, so one refused while another holds it
    is not lost (the holder, or whoever takes the claim next, answers it)."""
    path = wanted_path(root, key)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))


def pass_wanted_take(root: Path, key: str) -> bool:
    """Whether a pass was wanted since the last take; the record is gone afterwards."""
    try:
        wanted_path(root, key).unlink()
    except FileNotFoundError:
        return False
    return True


class Claim:
    """A held claim; ``release()`` (or the process ending) lets the next pass in."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None


def claim_take(root: Path, key: str) -> Claim | None:
    """The claim of session ``key``, or None while another pass holds it."""
    path = claim_path(root, key)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return Claim(fd)
