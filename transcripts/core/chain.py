"""The session's chain of files, read whole: rotate archives oldest first, then the current file.

Which archives belong to the session is ``archive.membership``; each file folds on its own
(a revision never crosses files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .archive import Membership, membership
from .codec import RecordKind, generation, may_change_rows
from .errors import SessionNotFound
from .fold import FoldReport, fold_stream
from .lines import first_record, split_lines
from .storefiles import StoreFiles


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


def session_lines(store: StoreFiles, key: str) -> list[bytes] | None:
    """The raw lines of the whole session, or None when only the fold can read it.

    The files of ``read_session``, chosen by the same ``membership`` rule; each line
    without its ``\\n``, line 0 included, oversize lines dropped and a leading BOM
    removed, as the fold does (``lines.split_lines``). None when any of those files may
    hold a row-changing record (``codec.may_change_rows``: one regex pass per file). A
    fork is no exception: its seed rows are lines of its own file.

    This does not bypass the one fold, it is a case of it: a file without row-changing
    records folds to exactly its rows in file order (the fold identity), so a reader
    that keeps the lines the fold keeps as rows (objects without ``_type``) sees the
    same rows as ``read_session(key).rows``, without building the ``meta`` dicts the
    fold would build. Anything else goes through ``read_session``.
    """
    path = store.path(key)
    if not path.is_file():
        raise SessionNotFound(key)
    try:
        data = path.read_bytes()
    except FileNotFoundError:  # deleted since the check
        raise SessionNotFound(key) from None
    if may_change_rows(data):
        return None
    current = split_lines(data, store.max_line)
    first = first_record(current)
    metadata = first if first is not None and first.get("_type") == RecordKind.METADATA else None
    current_gen = generation(metadata)
    lines: list[bytes] = []
    for archive in store.archive_paths(key):
        data = archive.read_bytes()
        archived = split_lines(data, store.max_line)
        first = first_record(archived)
        header = first if first is not None and first.get("_type") == RecordKind.ARCHIVE else None
        if membership(header, current_gen) is not Membership.SESSION:
            continue
        if may_change_rows(data):
            return None
        lines.extend(archived)
    lines.extend(current)
    return lines
