"""Building blocks of the ``writer_child`` sub-commands: row sizes and text, the ack and
result channels, a write spy, the test-control patches, and the disk-full rotation probe.

Only the child process imports this module: the patches it installs replace process-wide
functions (``os.write``, ``locking.hold``), which is safe there and nowhere else.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from transcripts.core import locking
from transcripts.core import store as store_module
from transcripts.core.errors import TranscriptError
from transcripts.core.store import TranscriptStore

HUGE = 1 << 40  # max_bytes that never triggers a rotation on append

# (size in bytes, weight): mostly small rows, some big ones that take long enough to write
# for a SIGKILL to land inside the write() (E1: ~2.5-10 % torn at 3 KB-1 MB).
KILL9_SIZES = [(100, 30), (3_000, 25), (60_000, 25), (300_000, 12), (1_000_000, 8)]
# With --aim the parent kills right after the first announced big write(): rows big enough
# that the write() often outlasts the parent's reaction (a 4 MB write takes ~1-5 ms here).
AIMED_SIZES = [(100, 15), (3_000, 15), (1_000_000, 30), (4_000_000, 40)]
BIG = 250_000
CONCURRENT_SIZES = [(100, 50), (3_000, 30), (60_000, 15), (300_000, 5)]
# Multi-byte text, so a torn line can end inside a UTF-8 sequence (bad_utf8) as well.
ALPHABET = "kill -9 ok é € λ "


def row_text(size: int, tag: str) -> str:
    """About ``size`` bytes of UTF-8 text starting with ``tag``."""
    unit = ALPHABET.encode()
    reps = max(1, size // len(unit))
    return tag + " " + ALPHABET * reps


def pick_size(rng: random.Random, table: list[tuple[int, int]]) -> int:
    sizes, weights = zip(*table, strict=True)
    return int(rng.choices(sizes, weights=weights)[0])


def emit(fd: int, line: str) -> None:
    os.write(fd, line.encode() + b"\n")


def print_result(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def file_sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def spy_writes() -> list[list[Any]]:
    """Record every ``os.write`` (bytes asked, bytes written or errno) in this process."""
    calls: list[list[Any]] = []
    real = os.write

    def spy(fd: int, data: Any) -> int:
        try:
            written = real(fd, data)
        except OSError as exc:
            calls.append(["error", len(data), errno.errorcode.get(exc.errno or 0, exc.errno)])
            raise
        calls.append(["ok", len(data), written])
        return written

    os.write = spy
    return calls


def install_controls() -> None:
    if os.environ.get("KIROCREW_TEST_NOLOCK") == "1":

        @contextlib.contextmanager
        def no_lock(*_args: Any, **_kwargs: Any) -> Iterator[None]:
            yield

        def split_write(fd: int, data: bytes) -> None:
            half = len(data) // 2
            for i, part in enumerate((data[:half], data[half:])):
                if i:
                    time.sleep(0)  # between the halves, let another writer in
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view) :]

        locking.hold = no_lock
        cast(Any, store_module).write_all = split_write
    if os.environ.get("KIROCREW_TEST_NO_TRUNCATE") == "1":
        os.ftruncate = lambda _fd, _size: None
    if os.environ.get("KIROCREW_TEST_NO_FENCE") == "1":
        real_tail = TranscriptStore._tail

        def unfenced(self: TranscriptStore, fd: int, size: int) -> tuple[bool, str | None]:
            return True, real_tail(self, fd, size)[1]

        TranscriptStore._tail = unfenced  # type: ignore[method-assign]


def enospc_rotation_on_append(root: Path, key: str) -> dict[str, Any]:
    """An append crosses ``max_bytes`` when the disk has room for the row and the archive
    of the dropped row, but not for the rewritten file: the append itself succeeded."""
    store = TranscriptStore(root, max_bytes=32 * 1024, keep_lines=1000)
    store.create(key, {"title": "rotating"})
    filler = root / "filler.bin"
    filler.write_bytes(b"\0" * 20 * 1024)  # leaves about 2 pages when the file crosses 32 KB
    calls = spy_writes()
    acked: list[str] = []
    out: dict[str, Any] = {}
    for _ in range(100):
        del calls[:]
        try:
            acked.append(store.append_row(key, "assistant", row_text(3_000, "rot")).ts[0])
        except (OSError, TranscriptError) as exc:
            number = getattr(exc, "errno", None)
            out["append_error"] = [type(exc).__name__, errno.errorcode.get(number or 0, number)]
            break
        if len(calls) > 1:  # the append also wrote an archive or a temp file: it rotated
            break
    out["writes"] = list(calls)
    out["acked"] = len(acked)
    view = store.read_session(key)
    stamps = [row["ts"] for row in view.rows]
    out["missing"] = len(set(acked) - set(stamps))
    out["duplicated"] = len(stamps) - len(set(stamps))
    out["archives"] = len(store.archive_paths(key))
    out["temps"] = sorted(p.name for p in root.rglob(".*.tmp-*"))
    out["anomalies"] = view.report.counts()
    filler.unlink()
    return out
