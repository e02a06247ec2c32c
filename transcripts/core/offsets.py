"""A per-file offset index for ``paging.py``, kept in memory and extended as the file grows.

``_IndexFold`` is THE fold with ``_row`` and ``_merge`` keeping byte offsets instead of
dicts, so its report is the fold's report. Appends only add complete lines at the end of
the same inode, so an index stays valid while the file keeps its device, inode, first
bytes and the bytes just before the indexed end; anything else (a rewrite replaced the
inode, a failed write truncated it) rebuilds it from byte 0.

Memory: at most ``BUDGET`` entries (one per row, revision or anomaly; about 150-210 bytes
each, see bench/bench_paging.py), least recently used files first; the index in use is
never evicted, so the bound is the budget plus one file's index.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .codec import MAX_LINE_BYTES
from .fold import FoldReport, FoldState
from .reader import RawLine, iter_lines
from .user_turns import is_user_turn

# Anomalies after which rows cannot be found by an exact, unique ts: full fold instead.
ORDER_KINDS = frozenset({"missing_ts", "bad_ts", "dup_ts", "non_monotonic_ts"})
HEAD_BYTES = 512  # line 0 starts here: a rewrite changes it (created_at, gen, rotated_at)
MARK_BYTES = 64  # the bytes just before the indexed end
BUDGET = 400_000  # entries: about 60-85 MB


class _IndexFold(FoldState):
    """The fold's checks and report for each line, keeping offsets instead of rows."""

    def __init__(self, file: str) -> None:
        super().__init__(file, keep_raw=False)
        self.row_by_ts: dict[str, int] = {}  # ts -> row number, kept from the first row
        self.by_ts = self.row_by_ts  # the fold's own lookup (it builds it lazily otherwise)
        self.offsets = array("q")  # row number -> byte offset of its line
        self.revisions: dict[int, list[int]] = {}  # row number -> offsets of its revisions
        self.first_ts: str | None = None
        self.last_row_ts: str | None = None
        # The session page's turn marks (paging.turn_marks): row, ts and the ts of the row before
        # (in this file) of each row that is a user turn as stored, and the rows a revision
        # may have made or unmade one (a patch of role or content).
        self.turn_rows = array("q")  # ascending, for bisect
        self.turn_ts: list[str] = []
        self.turn_prev: list[str | None] = []
        self.retyped: set[int] = set()

    def _row(self, obj: dict[str, Any], data: bytes, offset: int) -> None:
        ts = obj.get("ts")
        self._check_ts(ts, offset)
        if isinstance(ts, str):
            self.row_by_ts[ts] = len(self.offsets)
            if self.first_ts is None:
                self.first_ts = ts
            if is_user_turn(obj):
                self.turn_ts.append(ts)
                self.turn_prev.append(self.last_row_ts)
                self.turn_rows.append(len(self.offsets))  # last: readers bound by it
        self.last_row_ts = ts if isinstance(ts, str) else None
        self.offsets.append(offset)

    def _merge(self, index: int, patch: dict[str, Any], offset: int) -> None:
        self.revisions.setdefault(index, []).append(offset)
        if "role" in patch or "content" in patch:
            self.retyped.add(index)


class _Window:
    """``read`` over the bytes ``[start, end)`` of a file descriptor (for the line reader)."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self.fd, self.at, self.end = fd, start, end

    def read(self, size: int = -1) -> bytes:
        size = self.end - self.at if size < 0 else min(size, self.end - self.at)
        if size <= 0:
            return b""
        data = os.pread(self.fd, size, self.at)
        self.at += len(data)
        return data


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One consistent view of an index: rows ``< count`` and revisions ``< scanned``."""

    fold: _IndexFold  # its label is ``fold.file``; its ``first_ts`` is set by row 0
    metadata: dict[str, Any] | None
    header: dict[str, Any] | None
    report: FoldReport
    count: int
    scanned: int
    last_ts: str | None
    simple: bool  # rows are in file order and found by a unique ts

    def row_of(self, ts: str) -> int | None:
        found = self.fold.row_by_ts.get(ts)
        return found if found is not None and found < self.count else None

    def offset(self, row: int) -> int:
        return self.fold.offsets[row]

    def revisions_of(self, row: int) -> list[int]:
        return [o for o in self.fold.revisions.get(row, ()) if o < self.scanned]


class FileIndex:
    def __init__(self, label: str, dev: int, ino: int) -> None:
        self.lock = threading.Lock()
        self.reset(label, dev, ino)

    def reset(self, label: str, dev: int, ino: int) -> None:
        self.label, self.dev, self.ino = label, dev, ino
        self.fold = _IndexFold(label)  # snapshots keep the one they were taken from
        self.scanned = 0  # end of the last complete line folded
        self.tail = False  # an unterminated line follows ``scanned``
        self.head = b""
        self.mark = b""
        self.mtime_ns = -1

    @property
    def entries(self) -> int:
        fold = self.fold
        return len(fold.offsets) + fold.report.revisions + len(fold.report.anomalies)

    def matches(self, fd: int, st: os.stat_result, label: str) -> bool:
        if (st.st_dev, st.st_ino, label) != (self.dev, self.ino, self.label):
            return False
        if st.st_size < self.scanned:
            return False
        if st.st_size == self.scanned and st.st_mtime_ns == self.mtime_ns:
            return True  # untouched since indexed (every append moves mtime: strict sig)
        if os.pread(fd, len(self.head), 0) != self.head:
            return False
        start = max(0, self.scanned - MARK_BYTES)
        return os.pread(fd, self.scanned - start, start) == self.mark

    def extend(self, fd: int, st: os.stat_result, max_line: int) -> None:
        """Fold the complete lines in ``[scanned, size)``; an unterminated one waits."""
        size = st.st_size
        self.mtime_ns = st.st_mtime_ns
        if size <= self.scanned:
            self.tail = size > self.scanned
            return
        base, torn = self.scanned, None
        for line in iter_lines(_Window(fd, base, size), max_line=max_line):  # type: ignore[arg-type]
            if not line.terminated:
                torn = base + line.offset
                break
            self.fold.feed(RawLine(base + line.offset, line.data, True))
        self.scanned = size if torn is None else torn
        self.tail = torn is not None
        self.head = os.pread(fd, min(HEAD_BYTES, self.scanned), 0)
        start = max(0, self.scanned - MARK_BYTES)
        self.mark = os.pread(fd, self.scanned - start, start)

    def snapshot(self) -> Snapshot:
        fold, report = self.fold, self.fold.report
        copy = FoldReport(list(report.anomalies), report.lines, report.revisions)
        simple = (
            not self.tail
            and not fold.moves
            and not any(a.kind in ORDER_KINDS for a in report.anomalies)
        )
        count = len(fold.offsets)
        return Snapshot(
            fold, fold.metadata, fold.header, copy, count, self.scanned, fold.last_row_ts, simple
        )


class IndexCache:
    """Offset indexes by path, least recently used evicted past ``BUDGET`` entries."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, FileIndex] = OrderedDict()
        self._lock = threading.Lock()

    def snapshot(
        self, path: str, label: str, fd: int, *, max_line: int = MAX_LINE_BYTES
    ) -> Snapshot:
        """The index of the file open as ``fd`` (at ``path``), brought up to its size."""
        st = os.fstat(fd)
        with self._lock:
            index = self._items.get(path)
            if index is None:
                index = self._items[path] = FileIndex(label, st.st_dev, st.st_ino)
            self._items.move_to_end(path)
        with index.lock:
            if not index.matches(fd, st, label):
                index.reset(label, st.st_dev, st.st_ino)  # replaced or truncated: rebuild
            # Appends may have landed since the fstat: index only what it saw.
            index.extend(fd, st, max_line)
            snap = index.snapshot()
        self._evict(keep=path)
        return snap

    def _evict(self, keep: str) -> None:
        with self._lock:
            total = sum(i.entries for i in self._items.values())
            for path in list(self._items):
                if total <= BUDGET:
                    break
                if path != keep:
                    total -= self._items.pop(path).entries

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
