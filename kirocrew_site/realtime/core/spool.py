"""The frame spool: ``$KIROCREW_HOME/frames/*.json`` (``{"sends": [{"groups", "frames"}]}``),
taken oldest first by the server's relay. A writer batches ``LINGER_S`` of sends per file
(an import announces every row; a file per frame costs 0.3 ms). At most once, best effort,
like the layer it stands in for: a file is deleted before it is sent, a stale one unread.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcripts.core.fsutil import atomic_write, touched_within

FOLDER_MODE = 0o700  # frames name slots and row stamps: no other local user reads them
FILE_MODE = 0o600
HEARTBEAT = ".relay"  # touched by the relay on every tick; its mtime says it is alive
FRESH_S = 3.0  # a heartbeat older than this: no relay is running (12 missed ticks)
STALE_S = 30.0  # a frame file older than this is dropped unread: its news is old
LINGER_S = 0.02  # a writer's sends within this long share a file (added latency, at most)
MAX_SENDS = 256  # sends per file (a full buffer is written at once)
MAX_FILE_BYTES = 512 * 1024  # a full file is ~80 KB: bounds a hostile read
MAX_GROUPS = 16
MAX_FRAMES = 64
TAKE_LIMIT = 4  # files (~1000 sends) per take: a backlog holds the server loop ~50 ms at most

log = logging.getLogger(__name__)

# <20-digit ns stamp>-<pid>-<seq>.json: sorting names sorts files by when they were written
_NAME = re.compile(r"[0-9]{20}-[0-9]{1,10}-[0-9]{1,20}\.json")
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class SpoolError(OSError):
    """The spool folder cannot be trusted (not a directory, or another user's)."""


@dataclass(frozen=True)
class Spooled:
    """One send: every frame goes to every group, frames in order."""

    groups: tuple[str, ...]
    frames: tuple[dict[str, Any], ...]


@dataclass
class Taken:
    batches: list[Spooled] = field(default_factory=list)  # every file's sends, in order
    stale: int = 0
    malformed: list[tuple[str, str]] = field(default_factory=list)  # (file name, why)
    more: bool = False  # the limit was reached: take again at once


def spool_prepare(folder: Path) -> None:
    """Create the folder 0700, or check the existing one is ours and make it 0700."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=FOLDER_MODE)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):  # a symlink would send frames (and deletes) elsewhere
        raise SpoolError(errno.ENOTDIR, "frame spool is not a directory", str(folder))
    if info.st_uid != os.geteuid():
        raise SpoolError(errno.EPERM, "frame spool belongs to another user", str(folder))
    if stat.S_IMODE(info.st_mode) != FOLDER_MODE:  # mkdir's mode is masked; an old folder
        os.chmod(folder, FOLDER_MODE)


def heartbeat_touch(folder: Path, token: str) -> None:
    """Bump the heartbeat's mtime; a missing one is written with the relay's token, so only
    this relay removes it at exit."""
    path = folder / HEARTBEAT
    try:
        os.utime(path, follow_symlinks=False)
    except FileNotFoundError:
        _write_atomic(folder, HEARTBEAT, token.encode())


def heartbeat_fresh(folder: Path, now: float) -> bool:
    return touched_within(folder / HEARTBEAT, FRESH_S, now)


def heartbeat_drop(folder: Path, token: str) -> None:
    path = folder / HEARTBEAT
    with contextlib.suppress(OSError):
        if path.read_bytes() == token.encode():
            path.unlink()


Send = tuple[Sequence[str], Sequence[dict[str, Any]]]  # (groups, frames)


class SpoolWriter:
    """Frame files whose names sort as they were written (ns stamps forced to grow, so a
    clock step back cannot reorder them; the lock spans the rename). ``send`` buffers for
    ``linger_s`` on a non-daemon timer, so a command's last sends are written before exit."""

    def __init__(self, linger_s: float = LINGER_S, most: int = MAX_SENDS) -> None:
        self._linger_s = linger_s
        self._most = most
        self.forget()

    def forget(self) -> None:
        """A fresh state (a forked child's: the parent's lock may be held, its sends are
        the parent's to write)."""
        self._lock = threading.Lock()
        self._last = 0
        self._seq = 0
        self._pending: list[Send] = []
        self._folder: Path | None = None
        self._timer: threading.Timer | None = None

    def write(self, folder: Path, sends: Sequence[Send]) -> Path:
        with self._lock:
            return self._write(folder, sends)

    def send(self, folder: Path, groups: Sequence[str], frames: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            if self._folder is not None and self._folder != folder:
                self._flush()
            self._folder = folder
            self._pending.append((list(groups), list(frames)))
            if len(self._pending) >= self._most:
                self._flush()
            elif self._timer is None:
                self._timer = threading.Timer(self._linger_s, self.flush)
                self._timer.start()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, []
        if pending and self._folder is not None:
            try:
                self._write(self._folder, pending)
            except OSError:  # frames are hints: these are lost, as on a full channel layer
                log.warning("frame spool: %d send(s) not written", len(pending), exc_info=True)

    def _write(self, folder: Path, sends: Sequence[Send]) -> Path:
        doc = {"sends": [{"groups": list(g), "frames": list(f)} for g, f in sends]}
        body = json.dumps(doc, separators=(",", ":")).encode()
        self._last = stamp = max(time.time_ns(), self._last + 1)
        self._seq += 1
        pid = os.getpid()
        name = f"{stamp:020d}-{pid}-{self._seq}.json"
        return _write_atomic(folder, name, body)


def _write_atomic(folder: Path, name: str, body: bytes) -> Path:
    # Its temp file is a dot-file, which readers leave to its writer.
    path = folder / name
    atomic_write(path, body, fsync=False, mode=FILE_MODE)
    return path


def spool_take(
    folder: Path,
    *,
    now: float,
    accept_group: Callable[[str], bool],
    accept_frame: Callable[[dict[str, Any]], dict[str, Any]],
    limit: int = TAKE_LIMIT,
) -> Taken:
    """Take (read and delete) up to ``limit`` frame files, oldest first: a misshapen one is
    reported in ``malformed``, a stale one dropped unread, a temporary one left until stale."""
    taken = Taken()
    with os.scandir(folder) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        if name == HEARTBEAT:
            continue
        path = folder / name
        if name.startswith("."):  # mid-write, or its writer died before the rename
            with contextlib.suppress(OSError):
                if now - os.lstat(path).st_mtime > STALE_S:
                    _unlink(path)
            continue
        if len(taken.batches) >= limit:
            taken.more = True
            break
        if not _NAME.fullmatch(name):
            taken.malformed.append((name, "not a frame file name"))
            _unlink(path)
            continue
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            taken.malformed.append((name, "not a regular file"))
            _unlink(path)
            continue
        if now - info.st_mtime > STALE_S:
            taken.stale += 1
            _unlink(path)
            continue
        try:
            raw = _read(path)
        except OSError as exc:
            taken.malformed.append((name, f"unreadable: {exc.strerror}"))
            _unlink(path)
            continue
        # Deleted before parsing, so a file that breaks the parser is never retried.
        if not _unlink(path):
            taken.malformed.append((name, "cannot be deleted"))
            continue
        try:
            taken.batches.extend(spooled_parse(raw, accept_group, accept_frame))
        except ValueError as exc:
            taken.malformed.append((name, str(exc)[:200]))
    return taken


def spooled_parse(
    raw: bytes,
    accept_group: Callable[[str], bool],
    accept_frame: Callable[[dict[str, Any]], dict[str, Any]],
) -> list[Spooled]:
    """All of one file's sends, trusted only in the exact shape ``SpoolWriter`` writes, or
    (``ValueError``) none of them."""
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError("too large")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: a deep nest in a small file
        raise ValueError("not JSON") from None
    if not isinstance(doc, dict) or set(doc) != {"sends"}:
        raise ValueError("not a frame file")
    sends = doc["sends"]
    if not _bounded_list(sends, MAX_SENDS):
        raise ValueError("sends are not a list")
    spooled = []
    for send in sends:
        if not isinstance(send, dict) or set(send) != {"groups", "frames"}:
            raise ValueError("not a send")
        groups, frames = send["groups"], send["frames"]
        if not _bounded_list(groups, MAX_GROUPS) or not all(
            isinstance(g, str) and accept_group(g) for g in groups
        ):
            raise ValueError("unknown groups")
        if not _bounded_list(frames, MAX_FRAMES) or not all(isinstance(f, dict) for f in frames):
            raise ValueError("frames are not a list of objects")
        spooled.append(Spooled(tuple(groups), tuple(accept_frame(f) for f in frames)))
    return spooled


def _bounded_list(value: object, most: int) -> bool:
    return isinstance(value, list) and 0 < len(value) <= most


def _read(path: Path) -> bytes:
    # O_NOFOLLOW: a symlink swapped in after the lstat is refused, never followed
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
    try:
        return os.read(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)


def _unlink(path: Path) -> bool:
    """Remove it (an empty directory too); False when it stays, so it is never sent: a
    file taken again on every pass would repeat its frames four times a second."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        with contextlib.suppress(OSError):
            path.rmdir()
    except OSError:
        return False
    return True
