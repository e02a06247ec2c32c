"""Durable file replacement and the fsync policy.

Every rewrite is temp file + fsync + ``os.replace`` + directory fsync (policy permitting):
rename is atomic but not durable, and a reader's tail tolerance cannot recover a lost
rename.
"""

from __future__ import annotations

import contextlib
import enum
import os
import secrets
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


def atomic_write(path: Path, data: bytes, *, fsync: bool, mtime_ns: int | None = None) -> None:
    """Replace ``path`` with ``data``; with ``mtime_ns`` the new file keeps that mtime.

    The mtime is set on the temp file before the rename, so no reader ever sees the new
    content with a moved signature.
    """
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        try:
            write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
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
