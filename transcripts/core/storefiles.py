"""The store's files and their reads: paths, locks, line 0, identity, and the session's chain
(rotate archives oldest first, then the current file) whole or by its end. The rewrites take a
``StoreFiles``, so none imports the ``TranscriptStore`` that calls them.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import locking
from .archive import Membership, archive_candidates, membership
from .codec import MAX_LINE_BYTES, POSITION_HINT, generation
from .errors import SessionNotFound
from .fold import Folded, FoldReport, FoldState, fold_lines, fold_stream
from .fsutil import FsyncPolicy, open_regular
from .keys import BARE_PREFIX, safe_key
from .reader import UTF8_BOM, RawLine, iter_lines, read_line0
from .timestamps import now_local

# The original's rotation limits: past MAX_BYTES keep at most KEEP_LINES newest rows.
MAX_BYTES = 10 * 1024 * 1024
KEEP_LINES = 200
HEADER_BLOCK = 8 * 1024  # an archive's header is its first line: never read the whole file
_HINT = f'"{POSITION_HINT}"'.encode()


@dataclass(frozen=True, slots=True)
class Identity:
    """What a derived artifact (a summary sidecar) is valid for."""

    sig: int  # st_mtime_ns: moves with every append (strict sig)
    gen: int  # line 0's rotation_generation: advanced by every content rewrite
    size: int


@dataclass(slots=True)
class SessionView:
    key: str
    metadata: dict[str, Any] | None
    rows: list[dict[str, Any]]
    report: FoldReport
    files: list[str] = field(default_factory=list)


class StoreFiles:
    def __init__(
        self,
        root: Path,
        *,
        fsync: FsyncPolicy | str = FsyncPolicy.ROTATE,
        max_bytes: int = MAX_BYTES,
        keep_lines: int = KEEP_LINES,
        lock_timeout: float = locking.DEFAULT_TIMEOUT_S,
        clock: Callable[[], datetime] = now_local,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.root = Path(root)
        self.fsync = FsyncPolicy.parse(fsync)
        self.max_bytes = max_bytes
        self.keep_lines = keep_lines
        self.lock_timeout = lock_timeout
        self.clock = clock
        self.max_line = max_line
        # (st_dev, st_ino) -> size at which a rotation left the file over the limit
        # (an oversize line, no line 0): retried only once the file has doubled.
        self._stuck: dict[tuple[int, int], int] = {}

    @property
    def archive_dir(self) -> Path:
        return self.root / "archive"

    def path(self, key: str) -> Path:
        return self.root / f"{safe_key(key)}.jsonl"

    def lock_path(self, key: str) -> Path:
        return self.root / f"{safe_key(key)}.jsonl.lock"

    def archive_paths(self, key: str) -> list[Path]:
        """Archives of this session, oldest first; also the bare slot stem the original's seed
        data used (``research-notes__*`` for ``dashboard_research-notes``) when no transcript of
        that bare name exists to claim them.
        """
        stems = [safe_key(key)]
        if stems[0].startswith(BARE_PREFIX):
            bare = stems[0][len(BARE_PREFIX) :]
            if bare and not (self.root / f"{bare}.jsonl").exists():
                stems.append(bare)
        return archive_candidates(self.archive_dir, *stems)

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with locking.hold(str(self.lock_path(key)), self.lock_timeout):
            yield

    def exists(self, key: str) -> bool:
        # os.path, not pathlib: a key too long for a file name (ENAMETOOLONG) is False.
        return os.path.isfile(self.path(key))

    def keys_on_disk(self) -> list[Path]:
        return sorted(p for p in self.root.glob("*.jsonl") if p.is_file())

    def read_metadata(self, key: str) -> dict[str, Any] | None:
        try:
            return read_line0(self.path(key), self.max_line)
        except OSError as exc:  # no file can have a name over NAME_MAX: none there
            if exc.errno in (errno.ENOENT, errno.ENAMETOOLONG):
                return None
            raise

    def sig(self, key: str) -> int | None:
        try:
            return self.path(key).stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def identity(self, key: str) -> Identity | None:
        """Snapshot ``sig`` first, then ``gen`` (the order the summary guard relies on)."""
        path = self.path(key)
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        try:
            metadata = read_line0(path, self.max_line)
        except FileNotFoundError:  # deleted since the stat: an empty line 0 reads as gen 0
            metadata = None
        return Identity(st.st_mtime_ns, generation(metadata), st.st_size)

    def _identity_now(self, key: str) -> Identity:
        identity = self.identity(key)
        if identity is None:  # only if someone removed the file behind the lock's back
            raise SessionNotFound(key)
        return identity

    def read_file(self, key: str, *, keep_raw: bool = False) -> Folded:
        return self._fold(self.path(key), self.path(key).name, keep_raw)

    def _fold(self, path: Path, label: str, keep_raw: bool = False) -> Folded:
        with path.open("rb") as fp:
            return fold_stream(fp, file=label, keep_raw=keep_raw, max_line=self.max_line)

    def read_session(self, key: str) -> SessionView:
        """Archives + current file, each folded, rows in order. Only this session's own files: a
        fork holds its seed rows itself and no read follows line 0's ``forked_from``, so no
        session ever shows rows of whoever now has (or shares the file stem of) that name.
        """
        path = self.path(key)
        if not path.is_file():
            raise SessionNotFound(key)
        try:
            current = self.read_file(key)
        except FileNotFoundError:  # deleted since the check: the same answer as before it
            raise SessionNotFound(key) from None
        report = FoldReport()
        chain = self.chain_archives(key, generation(current.metadata), report, self._fold)
        rows = [row for _, folded in chain for row in folded.rows] + current.rows
        report.extend(current.report)
        files = [label for label, _ in chain] + [path.name]
        return SessionView(key, current.metadata, rows, report, files)

    def chain_archives(
        self, key: str, gen: int, report: FoldReport, read: Callable[[Path, str], Any]
    ) -> list[tuple[str, Any]]:
        """The archives whose rows come first in the session (``membership`` against ``gen``),
        with their labels, each as ``read`` returns it (its ``header`` and ``report``; None:
        skip it). Their reports and each unlanded archive go into ``report`` in chain order.
        """
        found = []
        for archive in self.archive_paths(key):
            label = f"archive/{archive.name}"
            try:
                item = read(archive, label)
            except FileNotFoundError:
                # Removed since listed: by retention or as unlanded (its rows are in the
                # file), or by a delete of the whole session.
                if not self.path(key).is_file():
                    raise SessionNotFound(key) from None
                continue
            member = None if item is None else membership(item.header, gen)
            if member is Membership.UNLANDED:
                # Its rows are still in the file; reading both would double them.
                report.add("unlanded_archive", 0, label)
            if member is Membership.SESSION:
                found.append((label, item))
                report.extend(item.report)
        return found

    def read_session_tail(
        self, key: str, identity: Identity, budget: int
    ) -> list[dict[str, Any]] | None:
        """The folded rows of the chain's last ``budget`` bytes as ``identity`` (an earlier
        snapshot) names it (its gen picks the archives, its size caps the current file).

        Each file's window folds on its own: a revision follows its target, so every revision of
        a row in the window is in it. None (read the session whole) when the chain fits in
        ``budget``, a file vanished or changed type meanwhile, or the window holds a position
        hint (it can move a row across the window's start).
        """
        try:
            paths = [
                archive
                for archive in self.archive_paths(key)
                if membership(_archive_header(archive, self.max_line), identity.gen)
                is Membership.SESSION
            ]
            paths.append(self.path(key))
            if sum(p.stat().st_size for p in paths) <= budget:
                return None
            tails = read_tail(paths, budget, self.max_line, identity.size)
        except OSError:
            return None
        if any(_HINT in line for tail in tails for line in tail.lines):
            return None
        rows: list[dict[str, Any]] = []
        for tail in tails:
            # Offsets only label anomalies, which this read drops; never 0 (read_tail already
            # removed line 0's BOM).
            lines = (RawLine(1, line, True) for line in tail.lines)
            rows.extend(fold_lines(lines, file=tail.path.name).rows)
        return rows


def _archive_header(path: Path, max_line: int) -> dict[str, Any] | None:
    """The header of an archive as the fold reads it, folding only up to its first object."""
    fd, _ = open_regular(path)  # never blocks on a FIFO planted in the folder
    with os.fdopen(fd, "rb") as fp:
        fold = FoldState("", keep_raw=False)
        for line in iter_lines(fp, max_line=max_line, block_size=HEADER_BLOCK):
            fold.feed(line)
            if not fold.first:
                return fold.header
    return None


@dataclass(slots=True)
class FileTail:
    path: Path
    start: int  # byte offset of the first returned line in the file
    lines: list[bytes]  # whole lines, without "\n"; line 0 of the file included if start == 0


def read_tail(
    paths: list[Path], budget: int, max_line: int, last_size: int | None = None
) -> list[FileTail]:
    """Windows of ``paths`` (oldest first) covering their last ``budget`` bytes, oldest first,
    as whole lines: each file is read from its end by ``pread`` (the cost is the budget, never
    the session's length). Lines over ``max_line`` are dropped and an unterminated last line
    kept, as the fold does. Missing files are skipped; one no longer a regular file raises
    ``NotRegularFile``, never blocks. ``last_size`` caps the newest file.
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
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        # As the fold: a BOM is stripped at byte 0 only, an oversize line (BOM included) dropped.
        if start == 0 and lines and lines[0].startswith(UTF8_BOM) and len(lines[0]) <= max_line:
            lines[0] = lines[0][len(UTF8_BOM) :]
        out.append(FileTail(path, start, [line for line in lines if len(line) <= max_line]))
    out.reverse()
    return out
