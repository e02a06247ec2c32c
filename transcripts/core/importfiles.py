"""Files brought in from a directory someone else may have seeded (``import_transcripts``).

Every source is opened once (``open_regular``: no link, no blocking FIFO), judged by its
apparent size before a byte is copied, and copied from that same fd. An archive is only
accepted next to the new session file that chains it, so an import can never put rows
in front of a session that already exists.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .fsutil import atomic_write, open_regular
from .keys import BARE_PREFIX

COPY_BLOCK = 1024 * 1024


class ImportRefused(Exception):
    """A file refused before a byte of it is written; the message is the reason."""


def check_size(size: int, limit: int) -> None:
    if size > limit:
        raise ImportRefused(
            f"too large: {size} bytes, the limit is {limit} (KIROCREW_IMPORT_MAX_BYTES)"
        )


def copy_new(src: Path, dest: Path, *, dry_run: bool, limit: int, refuse: str = "") -> str:
    """Copy at most ``limit`` bytes of ``src`` to ``dest`` unless something is there: copied |
    present | conflict. ``refuse``: why a new file may not be added (one already there is
    still compared)."""
    fd, st = open_regular(src)
    with os.fdopen(fd, "rb") as fp:
        check_size(st.st_size, limit)
        if os.path.lexists(dest):
            return _compare(fp, dest)
        if refuse:
            raise ImportRefused(refuse)
        if dry_run:
            return "copied"
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Linked into place: atomic and never over a file that appeared meanwhile. The
            # source's mtime survives, so the original's sig does.
            blocks = _bounded_blocks(fp, limit)
            atomic_write(dest, blocks, fsync=False, mtime_ns=st.st_mtime_ns, exclusive=True)
        except FileExistsError:
            return _compare(fp, dest)
    return "copied"


def _bounded_blocks(src: BinaryIO, limit: int) -> Iterator[bytes]:
    """At most ``limit`` bytes of ``src``: a source that grows past it mid-copy is refused."""
    copied = 0
    while block := src.read(COPY_BLOCK):
        copied += len(block)
        check_size(copied, limit)
        yield block


def _compare(src: BinaryIO, dest: Path) -> str:
    """present when ``dest`` is a regular file holding ``src``'s bytes, else conflict."""
    src.seek(0)
    try:
        fd, _ = open_regular(dest)
    except OSError:
        return "conflict"
    with os.fdopen(fd, "rb") as other:
        while True:
            a, b = src.read(COPY_BLOCK), other.read(COPY_BLOCK)
            if a != b:
                return "conflict"
            if not a:
                return "present"


def archive_owner(stem: str, root: Path, new: set[str]) -> tuple[str, str]:
    """(the new session file that chains an archive of ``stem``, "") or ("", why refused): the
    file ``archive_paths`` would pick, ``<stem>.jsonl`` else ``dashboard_<stem>.jsonl``, and
    only one this run brings (``new``): an archive without one would wait for whichever
    session is created under that name next.
    """
    for name in (f"{stem}.jsonl", f"{BARE_PREFIX}{stem}.jsonl"):
        if name in new:
            return name, ""
        if os.path.lexists(root / name):
            return "", (
                f"its session {name} is already in the store; archives are imported "
                "only together with their own new session file"
            )
    return "", "no session file of its own in this import"


NUL_FIELDS = (
    ("key", "not used as the key (the file name gives it)"),
    ("title", "mirrored without them"),
    ("memory_mode", "mirrored without them"),
    ("app", "not used to choose an owner"),
)


def nul_warnings(metadata: dict[str, Any] | None) -> tuple[str, ...]:
    """What the mirror leaves out of line 0 because it holds NUL (PostgreSQL text cannot hold
    it; SQLite could, but both profiles mirror the same)."""
    meta = metadata or {}
    return tuple(
        f"line 0's {name} holds NUL characters: {effect}"
        for name, effect in NUL_FIELDS
        if isinstance(meta.get(name), str) and "\x00" in meta[name]
    )
