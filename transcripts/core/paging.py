"""One page of the folded session, or where each user turn starts, at O(page) cost; or
None when only the full fold can say.

A page is what ``read_session`` then slicing after the cursor gives: the same rows, the
same whole-session fold report, the same ``next`` cursor. It is read through the
per-file offset indexes (``offsets.py``): the cursor's row is found by its exact ts,
the page's row lines and the revision lines that target those rows (always later in the
same file) are read by offset and folded by THE fold (``fold_lines``). Files are chained
as ``read_session`` chains them, so a page that starts in an archive reads that
archive's page, then the next file's.

The answer is None (the caller folds everything) when a file holds a position hint (it
can move a row across the cursor), a ts that is missing, bad, duplicated or out of order
in a file or across files (a cursor would not name one place), or an unterminated last
line (a write in progress or a torn tail): rare, and each visible in the fold report.

Turn marks: turn k (the session page opens at its last turns) is the k-th row the index
noted as a user turn as stored (``is_user_turn``), read with the cursor reader from the
row before it. None too when a revision patched a row's role or content: only the folded
row can say whether it is still a turn.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from .archive import Membership, membership
from .codec import generation
from .errors import SessionNotFound
from .fold import FoldReport, fold_lines
from .fsutil import NotRegularFile, open_regular
from .offsets import IndexCache, Snapshot
from .reader import RawLine
from .storefiles import StoreFiles
from .timestamps import ts_strictly_after

PAGE_INDEX = IndexCache()  # per process; see offsets.py for its memory bound
_FIRST_READ = 4096
_MAX_READ = 1024 * 1024


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
        chain, report = open_chain(store, key, files, cache)
        if not chain_simple(snap for _, snap in chain):
            return None
        start = _locate(chain, after)
        if start is None:
            return None
        return _collect(chain, start, limit, report)


def open_chain(
    store: StoreFiles, key: str, files: ExitStack, cache: IndexCache = PAGE_INDEX
) -> tuple[list[tuple[int, Snapshot]], FoldReport]:
    """The session's files as ``read_session`` chains them, each as (fd, index snapshot).

    The fds stay open until ``files`` closes; the report is the whole session's.
    """
    path = store.path(key)
    try:
        # As read_session: only a regular file (reached through a link, as it is there).
        fd, _ = open_regular(path, follow_links=True)
    except (FileNotFoundError, NotRegularFile):
        raise SessionNotFound(key) from None
    files.callback(os.close, fd)
    current = cache.snapshot(str(path), path.name, fd, max_line=store.max_line)
    chain: list[tuple[int, Snapshot]] = []
    report = FoldReport()
    for archive in store.archive_paths(key):
        try:
            afd, _ = open_regular(archive)
        except FileNotFoundError:
            if not path.is_file():
                raise SessionNotFound(key) from None
            continue  # removed since listed, as read_session skips it
        except NotRegularFile:
            continue  # archive_paths lists regular files only; replaced since
        files.callback(os.close, afd)
        label = f"archive/{archive.name}"
        snap = cache.snapshot(str(archive), label, afd, max_line=store.max_line)
        found = membership(snap.header, generation(current.metadata))
        if found is Membership.UNLANDED:
            report.add("unlanded_archive", 0, label)
        if found is not Membership.SESSION:
            continue
        chain.append((afd, snap))
        report.extend(snap.report)
    chain.append((fd, current))
    report.extend(current.report)
    return chain, report


def chain_simple(snaps: Any) -> bool:
    """Every file simple, and each file's rows strictly later than the previous file's."""
    last: str | None = None
    for snap in snaps:
        if not snap.simple:
            return False
        if snap.count:
            if last is not None and ts_strictly_after(snap.fold.first_ts, last) is not True:
                return False
            last = snap.last_ts
    return True


def _locate(chain: list[tuple[int, Snapshot]], after: str | None) -> tuple[int, int] | None:
    """(file, row) of the page's first row; None to let the full fold decide."""
    if not after:
        return 0, 0
    ts, nth = parse_cursor(after)
    for number, (_, snap) in enumerate(chain):
        row = snap.row_of(ts)
        if row is not None:
            if nth != 1:  # ts are unique here: no second bearer
                raise InvalidCursor(after)
            return number, row + 1
        if ts in snap.fold.row_by_ts:
            return None  # a row indexed after this snapshot was taken: no guessing
    raise InvalidCursor(after)


def _collect(
    chain: list[tuple[int, Snapshot]], start: tuple[int, int], limit: int, report: FoldReport
) -> Page | None:
    rows: list[dict[str, Any]] = []
    number, first = start
    end = start  # (file, row) just after the last row taken
    while number < len(chain):
        fd, snap = chain[number]
        last = min(snap.count, first + limit - len(rows))
        if first < last:
            page = _rows(fd, snap, first, last)
            if page is None:
                return None
            rows.extend(page)
        end = (number, max(first, last))
        if len(rows) >= limit:
            break
        number, first = number + 1, 0
    more = chain[end[0]][1].count > end[1] or any(snap.count for _, snap in chain[end[0] + 1 :])
    next_cursor = str(rows[-1].get("ts")) if rows and more else None
    return Page(rows, report, next_cursor)


def _rows(fd: int, snap: Snapshot, first: int, last: int) -> list[dict[str, Any]] | None:
    """Rows ``first..last-1`` of one file with every revision that targets them, folded."""
    offsets = [snap.offset(i) for i in range(first, last)]
    span_start, span_end = offsets[0], offsets[-1]  # rows before the last one, in one read
    span = os.pread(fd, span_end - span_start, span_start) if span_end > span_start else b""
    wanted = list(offsets)
    for i in range(first, last):
        wanted.extend(snap.revisions_of(i))
    lines = []
    for offset in sorted(wanted):
        data = None
        if span_start <= offset < span_end:
            end = span.find(b"\n", offset - span_start)
            if end >= 0:
                data = span[offset - span_start : end]
        lines.append(RawLine(offset, data if data is not None else _line_at(fd, offset), True))
    folded = fold_lines(lines, file=snap.fold.file)
    if len(folded.rows) != last - first:
        return None  # the bytes are no longer what was indexed: let the full fold answer
    return folded.rows


def _line_at(fd: int, offset: int) -> bytes:
    """The line starting at ``offset``: a small read first, growing for a long line."""
    parts: list[bytes] = []
    at, size = offset, _FIRST_READ
    while True:
        chunk = os.pread(fd, size, at)
        end = chunk.find(b"\n")
        if end >= 0 or not chunk:
            parts.append(chunk[:end] if end >= 0 else chunk)
            return b"".join(parts)
        parts.append(chunk)
        at += len(chunk)
        size = min(size * 4, _MAX_READ)


@dataclass(frozen=True, slots=True)
class TurnMark:
    ts: str  # the turn's user row
    after: str | None  # the cursor of the row before it; None: it is the session's first row


@dataclass(slots=True)
class TurnMarks:
    """The user turns of a session as of one snapshot of its files: O(files) to build."""

    files: list[tuple[Snapshot, int, str | None]]  # (file, its turns, the previous file's last ts)
    report: FoldReport  # the whole session's fold report
    last: str | None  # the cursor of the session's last row; None: no rows
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
        chain, report = open_chain(store, key, files, cache)
        snaps = [snap for _, snap in chain]
        if not chain_simple(iter(snaps)):
            return None
        marks: list[tuple[Snapshot, int, str | None]] = []
        before: str | None = None  # the previous file's last row
        total = 0
        for snap in snaps:
            fold, count = snap.fold, snap.count
            if any(row < count for row in list(fold.retyped)):
                return None
            # Rows indexed after this snapshot do not count (turn_rows is ascending).
            turns = bisect_left(fold.turn_rows, count, hi=len(fold.turn_rows))
            marks.append((snap, turns, before))
            total += turns
            if count:
                before = snap.last_ts
        return TurnMarks(marks, report, before, total)
