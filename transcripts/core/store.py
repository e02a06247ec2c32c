"""The append-only transcript store: one JSONL file per session under a sessions directory.

Normal operation only appends whole lines under the transcript's lock; the only rewrites
are rotation, rewind and metadata edits (``rewrite.py``). Every append strictly advances
the file's ``st_mtime_ns`` (the ``sig``), so "did the conversation change?" is one ``stat``.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from . import rewrite
from .codec import (
    FORBIDDEN_PATCH_KEYS,
    POSITION_HINT,
    encode_record,
    generation,
    new_metadata,
    revision_record,
)
from .content import check_content
from .errors import (
    RecordRejected,
    RevisionRejected,
    RowNotFound,
    SessionExists,
    SessionNotFound,
    TranscriptWriteError,
)
from .fsutil import write_all
from .reader import parse_json_line
from .redaction import RedactionReport, merge_reports, redact_text, redact_value
from .redaction.prefilter import value_may_hold_secret
from .roles import Role
from .storefiles import KEEP_LINES, MAX_BYTES, Identity, SessionView, StoreFiles
from .timestamps import monotonic_ts

# Re-exported: the store's public face.
__all__ = ["KEEP_LINES", "MAX_BYTES", "Appended", "Identity", "SessionView", "TranscriptStore"]

TAIL_WINDOW = 8 * 1024  # grows x4 until a ts is found (huge rows)


@dataclass(frozen=True, slots=True)
class Appended:
    ts: list[str]
    redactions: RedactionReport
    identity: Identity
    # The file's size just before this append: a mirror that recorded exactly this size
    # (same gen) mirrors everything before it and may be moved forward by these rows alone.
    prior_size: int


def row_order(row: dict[str, Any]) -> dict[str, Any]:
    """The original's key order: role, content, cls (when given), ts, then the rest."""
    head = {k: row[k] for k in ("role", "content", "cls") if k in row}
    return {**head, "ts": None, **{k: v for k, v in row.items() if k not in head and k != "ts"}}


def redact_row(row: dict[str, Any]) -> tuple[dict[str, Any], RedactionReport]:
    """Every non-user row's content, meta and variants pass redaction before disk. A row with
    nothing to redact comes back as it is; a clean ``meta`` costs one prefilter scan.
    """
    if row.get("role") == Role.USER:
        return row, {}
    changed: dict[str, Any] = {}
    reports: list[RedactionReport] = []
    content = row.get("content")
    if isinstance(content, str):
        clean, report = redact_text(content)
        if report:  # an empty report means the text came back unchanged
            changed["content"] = clean
            reports.append(report)
    for name in ("meta", "variants"):
        if name in row and value_may_hold_secret(row[name]):
            value, report = redact_value(row[name])
            if report:
                changed[name] = value
                reports.append(report)
    if not changed:
        return row, {}
    return {**row, **changed}, merge_reports(*reports)


def missing_row(path: Path, stamps: tuple[str, ...]) -> str | None:
    """The first of ``stamps`` no row (not a revision) of the file bears, if any."""
    with path.open("rb") as fp:
        if os.fstat(fp.fileno()).st_size == 0:
            return stamps[0]
        with mmap.mmap(fp.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return next((ts for ts in stamps if not _row_in(mm, ts)), None)


def _row_in(mm: mmap.mmap, ts: str) -> bool:
    """Whether a row (not a revision) with this ts is in the mapped file, both separator styles.
    Scans backwards: a state change almost always targets a recent row (the running turn).
    """
    for needle in (b'"ts":' + orjson.dumps(ts), b'"ts": ' + orjson.dumps(ts)):
        at = mm.rfind(needle)
        while at >= 0:
            start = mm.rfind(b"\n", 0, at) + 1
            end = mm.find(b"\n", at)
            value, bad = parse_json_line(mm[start : end if end >= 0 else len(mm)])
            if (
                not bad
                and isinstance(value, dict)
                and "_type" not in value
                and value.get("ts") == ts
            ):
                return True
            at = mm.rfind(needle, 0, at)
    return False


class TranscriptStore(StoreFiles):
    def create(
        self, key: str, metadata: dict[str, Any] | None = None, *, exist_ok: bool = False
    ) -> Identity:
        check_content(metadata, what="metadata")  # before the file exists: nothing to undo
        with self.locked(key):
            path = self.path(key)
            if path.exists() and path.stat().st_size > 0:
                if exist_ok:
                    return self._identity_now(key)
                raise SessionExists(key)
            return self._append_locked(key, [], metadata or {})[1]

    def append_row(
        self,
        key: str,
        role: str,
        content: Any,
        *,
        meta: dict[str, Any] | None = None,
        fields: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Appended:
        """``metadata`` seeds line 0 when this append creates the file."""
        row: dict[str, Any] = {"role": role, "content": content, **(fields or {})}
        if meta is not None:
            row["meta"] = meta
        return self.append_rows(key, [row], metadata=metadata)

    def append_rows(
        self,
        key: str,
        rows: list[dict[str, Any]],
        *,
        metadata: dict[str, Any] | None = None,
        create: bool = True,
    ) -> Appended:
        """Append rows in one write under one lock; each gets a fresh strictly increasing ts. With
        ``create=False`` a missing transcript is ``SessionNotFound``, decided under the lock: a
        session deleted a moment earlier is never re-created by a late append.
        """
        prepared, reports = [], []
        for row in rows:
            role = row.get("role")
            if not isinstance(role, str):
                raise RecordRejected("a row needs a string role")
            if type(role) is not str:  # a Role member: the content rule takes plain JSON only
                row = {**row, "role": str(role)}
            if "_type" in row:  # it would read back as metadata, a revision or a stray record
                raise RecordRejected("a row may not carry _type")
            check_content(row, what="row")  # nesting, numbers, NUL, text size: one rule
            clean, report = redact_row(row_order(row))
            prepared.append(clean)
            reports.append(report)
        with self.locked(key):
            seed = (metadata or {}) if create else None
            stamps, identity, prior = self._append_locked(key, prepared, seed)
        return Appended(stamps, merge_reports(*reports), identity, prior)

    def append_revision(self, key: str, target_ts: str, patch: dict[str, Any]) -> Appended:
        """Record a state change to an earlier row as an appended revision (O(1) bytes)."""
        if not isinstance(patch, dict) or not patch:
            raise RevisionRejected("a revision needs a non-empty patch object")
        if any(k in patch for k in FORBIDDEN_PATCH_KEYS):
            raise RevisionRejected("a revision may not change ts or _type")
        if "role" in patch:
            # Redaction depends on the role: a user row is stored as typed, so turning it
            # into an assistant row would publish unredacted text. A row keeps its role.
            raise RevisionRejected("a revision may not change role")
        check_content({"target_ts": target_ts, "patch": patch}, what="revision")
        anchor = patch.get(POSITION_HINT)
        if POSITION_HINT in patch and not isinstance(anchor, str):
            raise RevisionRejected(f'{POSITION_HINT} must be a row ts or ""')
        clean, report = redact_value(patch)
        record = revision_record(target_ts, clean)
        with self.locked(key):
            path = self.path(key)
            if not path.is_file():
                raise SessionNotFound(key)
            missing = missing_row(path, (target_ts, anchor) if anchor else (target_ts,))
            if missing is not None:
                raise RowNotFound(missing)
            stamps, identity, prior = self._append_locked(key, [record], None)
        return Appended(stamps, report, identity, prior)

    def _append_locked(
        self, key: str, records: list[dict[str, Any]], metadata: dict[str, Any] | None
    ) -> tuple[list[str], Identity, int]:
        """The records' stamps, the identity after, the size before."""
        path = self.path(key)
        # Opened anew after taking the lock: a rotation may have replaced the inode. Only a
        # caller that may create the session (it brings line 0's metadata) creates the file.
        flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT if metadata is not None else 0)
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            raise SessionNotFound(key) from None
        except OSError as exc:  # no inode left, a read-only store: nothing was written
            raise TranscriptWriteError(str(path), exc.errno, "open failed") from None
        size = -1
        try:
            st = os.fstat(fd)
            size, before = st.st_size, st.st_mtime_ns
            now = self.clock()
            parts: list[bytes] = []
            previous: str | None = None
            if size == 0:
                if metadata is None:
                    raise SessionNotFound(key)
                parts.append(encode_record(new_metadata(now, metadata), max_line=self.max_line))
            else:
                ends_clean, previous = self._tail(fd, size)
                if not ends_clean:
                    # A torn tail stays its own (reported) line; never glue a record onto it.
                    parts.append(b"\n")
            stamps = []
            for record in records:
                previous = monotonic_ts(previous, now)
                stamps.append(previous)
                parts.append(encode_record({**record, "ts": previous}, max_line=self.max_line))
            data = b"".join(parts)
            try:
                write_all(fd, data)
                if self.fsync.on_append:
                    os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise TranscriptWriteError(str(path), exc.errno, "append failed") from None
            after = os.fstat(fd)
            if after.st_mtime_ns <= before:
                # Coarse kernel clocks can leave mtime unchanged across appends inside one
                # tick; the sig must still move, or a stale summary would read as fresh.
                os.utime(fd, ns=(after.st_atime_ns, before + 1))
                after = os.fstat(fd)
        except (RecordRejected, SessionNotFound, TranscriptWriteError):
            # Refused, or a write that failed and was truncated back: a transcript this call
            # was creating is removed again, so no empty file outlives a failed create
            # (its name would answer "exists" to the next create and "not found" to a read).
            if size == 0:
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)
        if after.st_size > self.max_bytes and self._rotate(key, after):
            return stamps, self._identity_now(key), size
        # Under the lock the file is the one just written: its fstat is the identity's stat.
        return (
            stamps,
            Identity(after.st_mtime_ns, generation(self.read_metadata(key)), after.st_size),
            size,
        )

    def _rotate(self, key: str, st: os.stat_result) -> bool:
        """Rotate unless the last rotation failed and the file has not doubled since (appends to
        a session that cannot rotate stay O(1) amortized). Whether it rotated."""
        failed = self._stuck.get((st.st_dev, st.st_ino))
        if failed is not None and st.st_size < 2 * failed:
            return False
        rewrite.rotate_locked(self, key)
        with contextlib.suppress(FileNotFoundError):
            now = self.path(key).stat()
            if now.st_size > self.max_bytes:
                if len(self._stuck) >= 1024:
                    self._stuck.clear()  # bounded; at worst one more attempt per file
                self._stuck[(now.st_dev, now.st_ino)] = now.st_size
        return True

    def _tail(self, fd: int, size: int) -> tuple[bool, str | None]:
        """Whether the file ends in ``\\n``, and the newest ts in a bounded tail window."""
        window = TAIL_WINDOW
        ends_clean = os.pread(fd, 1, size - 1) == b"\n"
        while True:
            start = max(0, size - window)
            lines = os.pread(fd, size - start, start).split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first piece may be a partial line
            for line in reversed(lines):
                if not line.strip():
                    continue
                value, bad = parse_json_line(line)
                if not bad and isinstance(value, dict) and isinstance(value.get("ts"), str):
                    return ends_clean, value["ts"]
            if start == 0:
                return ends_clean, None
            window *= 4

    update_metadata = rewrite.update_metadata
    rewind = rewrite.rewind
    rotate = rewrite.rotate
    delete = rewrite.delete
    fork = rewrite.fork
