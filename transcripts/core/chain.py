"""The session's chain of files: rotate archives oldest first, then the current file.

Read whole (``read_session``) or by its end (``read_session_tail``).
Which archives belong to the session is ``archive.membership`` on the archive's header as
the fold reads it (its first object); each file folds on its own (a revision never
crosses files).
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
from .identity import Identity
from .lines import first_record
from .reader import UTF8_BOM, RawLine, iter_lines
from .storefiles import StoreFiles
from .tail import read_tail

HEADER_BLOCK = 8 * 1024  # an archive's header is its first line: never read the whole file
_HINT = f'"{POSITION_HINT}"'.encode()


@dataclass(slots=True)
class SessionView:
    """The whole session: archives (oldest first), then the current file, folded."""

    key: str
    metadata: dict[str, Any] | None
    rows: list[dict[str, Any]]
    report: FoldReport
    files: list[str] = field(default_factory=list)


def read_session(store: StoreFiles, key: str) -> SessionView:
    """Archives + current file, each folded, rows in order.

    Only this session's own files: a fork holds its seed rows itself (``fork.py``), and
    line 0's ``forked_from`` is provenance that no read follows, so no session ever
    shows rows of whoever now has (or shares the file stem of) that name.
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


def session_files(store: StoreFiles, key: str, gen: int) -> list[Path]:
    """The session's files, oldest first: the archives whose rows belong to it now
    (``membership`` against the file's generation ``gen``), then the current file."""
    paths = [
        archive
        for archive in store.archive_paths(key)
        if membership(_archive_header(archive, store.max_line), gen) is Membership.SESSION
    ]
    paths.append(store.path(key))
    return paths


def read_session_tail(
    store: StoreFiles, key: str, identity: Identity, budget: int
) -> list[dict[str, Any]] | None:
    """The folded rows of the session's last ``budget`` bytes, oldest first, or None when
    only ``read_session`` can answer.

    The chain is the one ``identity`` (a snapshot taken before) names: its generation picks
    the archives, its size caps the current file (rows appended since are not read). Whole
    lines only (``tail.read_tail``); each file's window folds on its own: a revision is
    appended after its target, so every revision that targets a row of the window is in
    it, and one whose target lies before it targets nothing the window keeps. None when
    the chain fits in ``budget`` (read it whole), when a file vanished or changed type
    meanwhile, or when a position hint is in the window: it can move a row across the
    window's start.
    """
    try:
        paths = session_files(store, key, identity.gen)
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
