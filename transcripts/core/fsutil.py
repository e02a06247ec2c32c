"""Durable file replacement, the fsync policy and opening untrusted entries.

Every rewrite is temp file + fsync + ``os.replace`` + directory fsync (policy permitting):
rename is atomic but not durable, and a reader's tail tolerance cannot recover a lost
rename. A file that must never replace another is linked in instead (``exclusive``).
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class FsyncPolicy(enum.StrEnum):
    NEVER = "never"  # tests and throwaway data
    ROTATE = "rotate"  # fsync every rewrite and directory change; appends use the page cache
    ALWAYS = "always"  # additionally fsync every append

    @classmethod
    def parse(cls, value: str | FsyncPolicy) -> FsyncPolicy:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise ValueError(
                f"unknown fsync policy {value!r}; use one of: {', '.join(p.value for p in cls)}"
            ) from None

    @property
    def on_rewrite(self) -> bool:
        return self is not FsyncPolicy.NEVER

    @property
    def on_append(self) -> bool:
        return self is FsyncPolicy.ALWAYS


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Loop over short writes; the caller handles an error after a partial write."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def atomic_write(
    path: Path,
    data: bytes | Iterable[bytes],
    *,
    fsync: bool,
    mtime_ns: int | None = None,
    mode: int | None = None,
    exclusive: bool = False,
) -> None:
    """Replace ``path`` with ``data`` (bytes or chunks; any failure leaves nothing behind).
    ``mtime_ns`` is set before the rename, so no reader sees new content with an old sig.
    ``mode``: the temp file is 0600 until then, so a file that may hold secrets is never
    readable by others, even briefly (else 0644 less the umask). ``exclusive``: hard-linked
    into place, which fails with ``FileExistsError`` when a file of that name appeared.
    """
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    create_mode = 0o644 if mode is None else 0o600
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, create_mode)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            for chunk in (data,) if isinstance(data, bytes) else data:
                write_all(fd, chunk)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        if exclusive:
            os.link(tmp, path)
            tmp.unlink()
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    if fsync:
        fsync_dir(path.parent)


def remove_stale_temps(directory: Path, name: str) -> None:
    """Remove temp files a killed writer left behind for ``name`` (never the data file)."""
    for stale in directory.glob(f".{name}.tmp-*"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()


# ---------------------------------------------------------------- untrusted entries
# Commands walk directories that anyone with write access could have seeded: a symlink
# would make them read (or copy) a file outside the store, and opening a FIFO blocks
# until a writer appears, so a command would hang. Only regular files are ever opened.

_KINDS = (
    (stat.S_ISLNK, "a symbolic link (never followed)"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def kind_of(mode: int) -> str:
    """What a non-regular entry is, for a skip reason."""
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


class NotRegularFile(OSError):
    """The entry is not a regular file; ``reason`` says what it is."""

    def __init__(self, path: Path, reason: str) -> None:
        self.reason = f"not a regular file: {reason}"
        super().__init__(errno.EINVAL, self.reason, str(path))


def open_regular(path: Path, *, follow_links: bool = False) -> tuple[int, os.stat_result]:
    """A read-only fd of ``path`` and its ``fstat``, only when it is a regular file (the caller
    closes it). ``O_NOFOLLOW`` refuses a symlink unless ``follow_links`` (a session's own
    transcript is read through a link, as it always was), ``O_NONBLOCK`` returns at once on a
    FIFO, and the type is judged on the opened fd, so nothing can be swapped in between.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    if not follow_links:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a link; a socket (or device) node
            raise NotRegularFile(path, kind_of(os.lstat(path).st_mode)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, kind_of(st.st_mode))
        os.set_blocking(fd, True)  # a regular file never blocks; plain reads from here on
    except BaseException:
        os.close(fd)
        raise
    return fd, st


@dataclass(frozen=True, slots=True)
class Skipped:
    path: Path
    reason: str


def regular_files(directory: Path) -> tuple[list[Path], list[Skipped]]:
    """``directory``'s visible ``*.jsonl`` entries, sorted: regular files, and the rest with why
    each is skipped (by ``lstat``). Open them with ``open_regular``: entries may be swapped.
    """
    found: list[Path] = []
    skipped: list[Skipped] = []
    try:
        with os.scandir(directory) as scan:
            entries = list(scan)
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".jsonl"):
            continue  # as ``glob("*.jsonl")``: hidden names are temp files, never data
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue  # removed since the listing
        if stat.S_ISREG(mode):
            found.append(Path(entry.path))
        else:
            skipped.append(Skipped(Path(entry.path), f"not a regular file: {kind_of(mode)}"))
    return sorted(found), sorted(skipped, key=lambda s: s.path)


def touched_within(path: Path, seconds: float, now: float) -> bool:
    """Whether ``path`` (a heartbeat file) was touched within ``seconds`` of ``now``, either
    way: clocks step. A missing or unreadable file was not."""
    try:
        mtime = os.lstat(path).st_mtime
    except OSError:
        return False
    return abs(now - mtime) < seconds
