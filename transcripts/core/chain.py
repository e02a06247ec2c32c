"""The session's chain of files: rotate archives oldest first, then the current file.

Read whole (``read_session``) or by its end (``read_session_tail``). Which archives belong
is ``archive.membership`` on the header as the fold reads it (its first object); each file
folds on its own (a revision never crosses files).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .archive import Membership, membership
from .codec import POSITION_HINT, RecordKind, generation
from .errors import SessionNotFound
from .fold import FoldReport, fold_lines, fold_stream
from .fsutil import open_regular
from .reader import UTF8_BOM, RawLine, first_record, iter_lines, split_lines
from .storefiles import Identity, StoreFiles

HEADER_BLOCK = 8 * 1024  # an archive's header is its first line: never read the whole file
_HINT = f'"{POSITION_HINT}"'.encode()


@dataclass(slots=True)
class SessionView:
    key: str
    metadata: dict[str, Any] | None
    rows: list[dict[str, Any]]
    report: FoldReport
    files: list[str] = field(default_factory=list)


def read_session(store: StoreFiles, key: str) -> SessionView:
    """Archives + current file, each folded, rows in order.

    Only this session's own files: a fork holds its seed rows itself, and line 0's
    ``forked_from`` is provenance no read follows, so no session ever shows rows of
    whoever now has (or shares the file stem of) that name.
    """
    path = store.path(key)
    if not path.is_file():
        raise SessionNotFound(key)
    report = FoldReport()
    rows: list[dict[str, Any]] = []
    files: list[str] = []
    try:
        current = store.read_file(key)
    except FileNotFoundError:  # deleted since the check: the same answer as before it
        raise SessionNotFound(key) from None
    current_gen = generation(current.metadata)
    for archive in store.archive_paths(key):
        try:
            fp = archive.open("rb")
        except FileNotFoundError:
            # Removed since listed: by retention or as unlanded (its rows are in the
            # file), or by a delete of the whole session.
            if not path.is_file():
                raise SessionNotFound(key) from None
            continue
        with fp:
            folded = fold_stream(fp, file=f"archive/{archive.name}", max_line=store.max_line)
        found = membership(folded.header, current_gen)
        if found is Membership.UNLANDED:
            # Its rows are still in the file; reading both would double them.
            report.add("unlanded_archive", 0, f"archive/{archive.name}")
        if found is not Membership.SESSION:
            continue
        rows.extend(folded.rows)
        report.extend(folded.report)
        files.append(f"archive/{archive.name}")
    rows.extend(current.rows)
    report.extend(current.report)
    files.append(path.name)
    return SessionView(key, current.metadata, rows, report, files)


def _archive_header(path: Path, max_line: int) -> dict[str, Any] | None:
    """The header of an archive as the fold reads it (its first object, a BOM at byte 0
    removed), reading only up to that object; None when it is no archive header."""
    fd, _ = open_regular(path)  # never blocks on a FIFO planted in the folder
    with os.fdopen(fd, "rb") as fp:
        for line in iter_lines(fp, max_line=max_line, block_size=HEADER_BLOCK):
            if line.data is None:
                continue
            data = line.data.removeprefix(UTF8_BOM) if line.offset == 0 else line.data
            first = first_record([data])
            if first is not None:
                return first if first.get("_type") == RecordKind.ARCHIVE else None
    return None


@dataclass(slots=True)
class FileTail:
    path: Path
    start: int  # byte offset of the first returned line in the file
    lines: list[bytes]  # whole lines, without "\n"; line 0 of the file included if start == 0


def read_tail(
    paths: list[Path], budget: int, max_line: int, last_size: int | None = None
) -> list[FileTail]:
    """Windows of ``paths`` (oldest first) covering their last ``budget`` bytes, oldest first.

    The cost is the budget, never the session's length: files are read newest first, each
    from its end by ``pread``, and a line cut by the window's start is dropped. A line over
    ``max_line`` is dropped, as the fold drops it; an unterminated last line is kept (the
    fold keeps one too, as a torn tail it reports). Missing files are skipped (rotated away
    since listed); one no longer a regular file raises ``NotRegularFile`` (an ``OSError``),
    never blocks. ``last_size`` caps the newest file at the size of an earlier snapshot.
    """
    out: list[FileTail] = []
    left = budget
    for path in reversed(paths):
        if left <= 0:
            break
        newest = path == paths[-1]
        try:
            # Never blocks on a FIFO planted in the folder; the session's own file is read
            # through a link, as every reader reads it.
            fd, st = open_regular(path, follow_links=newest)
        except FileNotFoundError:
            continue
        try:
            size = st.st_size
            if last_size is not None and newest:
                size = min(size, last_size)
            start = max(0, size - left)
            data = os.pread(fd, size - start, start)
        finally:
            os.close(fd)
        left -= len(data)
        if start > 0:
            # The first piece is the end of a line that began before the window (or, if the
            # byte before the window is "\n", a whole line: dropped too, one row is cheap).
            cut = data.find(b"\n")
            start += cut + 1 if cut >= 0 else len(data)
            data = data[cut + 1 :] if cut >= 0 else b""
        lines = split_lines(data, max_line, at_file_start=start == 0)
        out.append(FileTail(path, start, lines))
    out.reverse()
    return out


def read_session_tail(
    store: StoreFiles, key: str, identity: Identity, budget: int
) -> list[dict[str, Any]] | None:
    """The folded rows of the session's last ``budget`` bytes, oldest first, or None when
    only ``read_session`` can answer.

    The chain is the one ``identity`` (an earlier snapshot) names: its generation picks the
    archives, its size caps the current file. Each file's window folds on its own: a
    revision is appended after its target, so every revision that targets a row of the
    window is in it, and one whose target lies before it targets nothing the window keeps.
    None when the chain fits in ``budget`` (read it whole), when a file vanished or changed
    type meanwhile, or when a position hint is in the window: it can move a row across the
    window's start.
    """
    try:
        paths = [
            archive
            for archive in store.archive_paths(key)
            if membership(_archive_header(archive, store.max_line), identity.gen)
            is Membership.SESSION
        ]
        paths.append(store.path(key))
        if sum(p.stat().st_size for p in paths) <= budget:
            return None
        tails = read_tail(paths, budget, store.max_line, identity.size)
    except OSError:
        return None
    if any(_HINT in line for tail in tails for line in tail.lines):
        return None
    rows: list[dict[str, Any]] = []
    for tail in tails:
        # Never 0: read_tail already removed line 0's BOM (offsets only label anomalies).
        offset = tail.start or 1
        raw: list[RawLine] = []
        for line in tail.lines:
            raw.append(RawLine(offset, line, True))
            offset += len(line) + 1
        rows.extend(fold_lines(raw, file=tail.path.name).rows)
    return rows
