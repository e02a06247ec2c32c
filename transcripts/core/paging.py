"""O(page) reads of a long session through per-file offset indexes (docs/DESIGN.md, "Reading
long sessions"): a page (``read_page``) or the user turns (``turn_marks``); None when only the
full fold can say. The index is THE fold keeping byte offsets instead of rows, so its report is
the fold's; it stays valid while the file keeps its device, inode, first bytes and the bytes
just before the indexed end (appends only add lines), else it is rebuilt from byte 0.
"""

from __future__ import annotations

import os
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .codec import generation
from .errors import SessionNotFound
from .fold import FoldReport, FoldState, fold_lines
from .fsutil import NotRegularFile, open_regular
from .reader import RawLine, iter_lines, line_at
from .storefiles import StoreFiles
from .timestamps import ts_strictly_after
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
        # The session page's turn marks (turn_marks): row, ts and the ts of the row before
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
    """``read`` over the bytes ``[start, end)`` of a file descriptor."""

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

    fd: int  # the file it indexes, open until the read's ExitStack closes
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
        self.times = (-1, -1)  # (mtime, ctime) in ns when last indexed

    @property
    def entries(self) -> int:
        fold = self.fold
        return len(fold.offsets) + fold.report.revisions + len(fold.report.anomalies)

    def matches(self, fd: int, st: os.stat_result, label: str) -> bool:
        if (st.st_dev, st.st_ino, label) != (self.dev, self.ino, self.label):
            return False
        if st.st_size < self.scanned:
            return False
        if st.st_size == self.scanned and (st.st_mtime_ns, st.st_ctime_ns) == self.times:
            # Untouched since indexed. Not mtime alone: a rewrite keeps the old mtime on
            # purpose, and its new file can reuse the old inode and size; ctime moves.
            return True
        if os.pread(fd, len(self.head), 0) != self.head:
            return False
        start = max(0, self.scanned - MARK_BYTES)
        return os.pread(fd, self.scanned - start, start) == self.mark

    def extend(self, fd: int, st: os.stat_result, max_line: int) -> None:
        """Fold the complete lines in ``[scanned, size)``; an unterminated one waits."""
        size = st.st_size
        self.times = (st.st_mtime_ns, st.st_ctime_ns)
        if size <= self.scanned:
            self.tail = False  # (a smaller file was reset and rebuilt from 0 by matches())
            return
        base, torn = self.scanned, None
        window = _Window(fd, base, size)
        for line in iter_lines(window, max_line=max_line):  # type: ignore[arg-type]
            if not line.terminated:
                torn = base + line.offset
                break
            self.fold.feed(RawLine(base + line.offset, line.data, True))
        self.scanned = size if torn is None else torn
        self.tail = torn is not None
        self.head = os.pread(fd, min(HEAD_BYTES, self.scanned), 0)
        start = max(0, self.scanned - MARK_BYTES)
        self.mark = os.pread(fd, self.scanned - start, start)

    def snapshot(self, fd: int) -> Snapshot:
        fold, report = self.fold, self.fold.report
        copy = FoldReport(list(report.anomalies), report.lines, report.revisions)
        simple = (
            not self.tail
            and not fold.moves
            and not any(a.kind in ORDER_KINDS for a in report.anomalies)
        )
        count, scanned = len(fold.offsets), self.scanned
        return Snapshot(
            fd, fold, fold.metadata, fold.header, copy, count, scanned, fold.last_row_ts, simple
        )


class IndexCache:
    """Offset indexes by path, least recently used evicted past ``BUDGET`` entries."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, FileIndex] = OrderedDict()
        self._lock = threading.Lock()

    def snapshot(self, path: str, label: str, fd: int, *, max_line: int) -> Snapshot:
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
            snap = index.snapshot(fd)
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


PAGE_INDEX = IndexCache()  # per process; its memory bound: BUDGET


class InvalidCursor(ValueError):
    """An ``after`` cursor that names no row of the session (rewound away, or made up)."""


@dataclass(slots=True)
class Page:
    rows: list[dict[str, Any]]
    report: FoldReport
    next: str | None


def parse_cursor(after: str) -> tuple[str, int]:
    """``ts`` or ``ts#n`` -> (ts, n); n is 0 for a suffix that names no bearer."""
    if "#" not in after:
        return after, 1
    ts, _, nth = after.rpartition("#")
    return ts, int(nth) if nth.isdigit() and int(nth) > 0 else 0


def cursor_of(ts: object, nth: int) -> str:
    """The cursor of the ``nth`` row stamped ``ts``: ``parse_cursor``'s inverse, the one
    spelling every page, window and index mark writes."""
    return str(ts) if nth == 1 else f"{ts}#{nth}"


def read_page(
    store: StoreFiles,
    key: str,
    after: str | None,
    limit: int,
    *,
    cache: IndexCache = PAGE_INDEX,
) -> Page | None:
    """The page after ``after`` (``SessionNotFound``, ``InvalidCursor``), or None."""
    with ExitStack() as files:
        opened = _open_chain(store, key, files, cache)
        if opened is None:
            return None
        chain, report = opened
        start = _locate(chain, after)
        return None if start is None else _collect(chain, start, limit, report)


def _open_chain(
    store: StoreFiles, key: str, files: ExitStack, cache: IndexCache
) -> tuple[list[Snapshot], FoldReport] | None:
    """The session's files as ``read_session`` chains them, each as its index snapshot (its
    fd open until ``files`` closes), and the whole session's report; None when the chain is
    not simple: a file is not, or its rows are not all later than the previous file's.
    """
    path = store.path(key)
    try:
        # As read_session: only a regular file (reached through a link, as it is there).
        fd, _ = open_regular(path, follow_links=True)
    except (FileNotFoundError, NotRegularFile):
        raise SessionNotFound(key) from None
    files.callback(os.close, fd)
    current = cache.snapshot(str(path), path.name, fd, max_line=store.max_line)
    report = FoldReport()

    def index_archive(archive: Path, label: str) -> Snapshot | None:
        try:
            afd, _ = open_regular(archive)
        except NotRegularFile:
            return None  # archive_paths lists regular files only; replaced since
        files.callback(os.close, afd)
        return cache.snapshot(str(archive), label, afd, max_line=store.max_line)

    gen = generation(current.metadata)
    chain = [snap for _, snap in store.chain_archives(key, gen, report, index_archive)]
    chain.append(current)
    report.extend(current.report)
    last: str | None = None
    for snap in chain:
        if not snap.simple:
            return None
        if snap.count:  # so the fold's first_ts is set (row 0's ts)
            if last is not None and ts_strictly_after(snap.fold.first_ts or "", last) is not True:
                return None
            last = snap.last_ts
    return chain, report


def _locate(chain: list[Snapshot], after: str | None) -> tuple[int, int] | None:
    """(file, row) of the page's first row; None to let the full fold decide."""
    if not after:
        return 0, 0
    ts, nth = parse_cursor(after)
    for number, snap in enumerate(chain):
        row = snap.row_of(ts)
        if row is not None:
            if nth != 1:  # ts are unique here: no second bearer
                raise InvalidCursor(after)
            return number, row + 1
        if ts in snap.fold.row_by_ts:
            return None  # a row indexed after this snapshot was taken: no guessing
    raise InvalidCursor(after)


def _collect(
    chain: list[Snapshot], start: tuple[int, int], limit: int, report: FoldReport
) -> Page | None:
    rows: list[dict[str, Any]] = []
    number, first = start
    end = start  # (file, row) just after the last row taken
    while number < len(chain):
        snap = chain[number]
        last = min(snap.count, first + limit - len(rows))
        if first < last:
            page = _rows(snap, first, last)
            if page is None:
                return None
            rows.extend(page)
        end = (number, max(first, last))
        if len(rows) >= limit:
            break
        number, first = number + 1, 0
    more = chain[end[0]].count > end[1] or any(snap.count for snap in chain[end[0] + 1 :])
    next_cursor = str(rows[-1].get("ts")) if rows and more else None
    return Page(rows, report, next_cursor)


def _rows(snap: Snapshot, first: int, last: int) -> list[dict[str, Any]] | None:
    """Rows ``first..last-1`` of one file with every revision that targets them, folded."""
    offsets = list(snap.fold.offsets[first:last])
    span_start, span_end = offsets[0], offsets[-1]  # rows before the last one, in one read
    span = os.pread(snap.fd, span_end - span_start, span_start) if span_end > span_start else b""
    wanted = offsets + [o for i in range(first, last) for o in snap.revisions_of(i)]
    lines = []
    for offset in sorted(wanted):
        data = None
        if span_start <= offset < span_end:
            end = span.find(b"\n", offset - span_start)
            if end >= 0:
                data = span[offset - span_start : end]
        lines.append(RawLine(offset, data if data is not None else line_at(snap.fd, offset), True))
    folded = fold_lines(lines, file=snap.fold.file)
    if len(folded.rows) != last - first:
        return None  # the bytes are no longer what was indexed: let the full fold answer
    return folded.rows


@dataclass(frozen=True, slots=True)
class TurnMark:
    ts: str  # the turn's user row
    after: str | None  # the cursor of the row before it; None: it is the session's first row


@dataclass(slots=True)
class TurnMarks:
    """The user turns of a session as of one snapshot of its files: O(files) to build."""

    files: list[tuple[Snapshot, int, str | None]]  # (file, its turns, the previous file's last ts)
    report: FoldReport  # the whole session's fold report
    total: int

    def mark(self, turn: int) -> TurnMark:
        """Turn ``turn`` (1-based, <= total)."""
        for snap, count, before in self.files:
            if turn <= count:
                fold, i = snap.fold, turn - 1
                row = fold.turn_rows[i]
                return TurnMark(fold.turn_ts[i], fold.turn_prev[i] if row else before)
            turn -= count
        raise IndexError(turn)


def turn_marks(store: StoreFiles, key: str, *, cache: IndexCache = PAGE_INDEX) -> TurnMarks | None:
    """The session's user turns (``SessionNotFound``), or None: fold instead."""
    with ExitStack() as files:
        opened = _open_chain(store, key, files, cache)
        if opened is None:
            return None
        chain, report = opened
        marks: list[tuple[Snapshot, int, str | None]] = []
        before: str | None = None  # the previous file's last row
        total = 0
        for snap in chain:
            fold, count = snap.fold, snap.count
            if any(row < count for row in list(fold.retyped)):
                return None
            # Rows indexed after this snapshot do not count (turn_rows is ascending).
            turns = bisect_left(fold.turn_rows, count, hi=len(fold.turn_rows))
            marks.append((snap, turns, before))
            total += turns
            if count:
                before = snap.last_ts
        return TurnMarks(marks, report, total)
