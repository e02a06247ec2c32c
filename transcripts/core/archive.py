"""Archives of dropped rows: ``archive/<safe_key>__<YYYYMMDD-HHMMSS>[-N].jsonl``.

Line 0 is ``{"_type":"archive","reason","archived_at","count"}`` (``archived_at`` a naive
local ISO time, as the original wrote it); the dropped lines follow. The ``__`` delimiter
is the original's, because keys may contain dots. Retention reads ``archived_at`` from
the header, never the file's mtime (a copy or restore would reset it).
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from .codec import RecordKind
from .fsutil import fsync_dir, open_regular, regular_files, write_all
from .reader import parse_json_line
from .timestamps import parse_ts

DELIMITER = "__"
ROTATE_REASON = "rotate"  # the only archive reason whose rows still belong to the session
MAX_COLLISIONS = 1000
_SUFFIX = re.compile(r"(\d{8}-\d{6})(?:-(\d+))?\.jsonl")
_NAME = re.compile(r"(.+)" + DELIMITER + _SUFFIX.pattern)


def archive_stem(name: str) -> str | None:
    """The stem of the session an archive file name chains to (the last ``__<stamp>``
    decides: a stem may hold ``__``), or None for no archive name."""
    match = _NAME.fullmatch(name)
    return match.group(1) if match else None


def archive_candidates(archive_dir: Path, *stems: str) -> list[Path]:
    """These stems' archives, oldest first (stamp, then collision suffix); regular files only:
    a link is never followed and a FIFO would block every read."""
    if not archive_dir.is_dir():
        return []
    found: list[tuple[str, int, Path]] = []
    prefixes = [stem + DELIMITER for stem in stems]
    for entry in os.scandir(archive_dir):
        for prefix in prefixes:
            if entry.name.startswith(prefix) and entry.is_file(follow_symlinks=False):
                match = _SUFFIX.fullmatch(entry.name[len(prefix) :])
                if match:
                    found.append((match.group(1), int(match.group(2) or 0), Path(entry.path)))
                break
    return [path for _, _, path in sorted(found)]


def write_archive(
    archive_dir: Path,
    stem: str,
    lines: list[bytes],
    reason: str,
    *,
    now: datetime,
    fsync: bool,
    generation: int | None = None,
) -> Path:
    """Write the dropped ``lines`` (no newlines) under a fresh name. ``generation``: the one
    the rewrite produces, so a reader can skip the archive if that rewrite never landed."""
    archive_dir.mkdir(parents=True, exist_ok=True)
    header: dict[str, object] = {
        "_type": RecordKind.ARCHIVE,
        "reason": reason,
        "archived_at": now.astimezone().replace(tzinfo=None).isoformat(),
        "count": len(lines),
    }
    if generation is not None:
        header["generation"] = generation
    body = orjson.dumps(header) + b"\n" + b"".join(line + b"\n" for line in lines)
    stamp, first = f"{now.astimezone():%Y%m%d-%H%M%S}", 0
    # Sessions chain archives in name order: a local clock that went back (DST fall-back,
    # NTP step) must not sort this archive before older ones, so never name it lower.
    existing = archive_candidates(archive_dir, stem)
    if existing:
        newest = _SUFFIX.fullmatch(existing[-1].name[len(stem) + len(DELIMITER) :])
        if newest and newest.group(1) >= stamp:
            stamp, first = newest.group(1), int(newest.group(2) or 0) + 1
    base = f"{stem}{DELIMITER}{stamp}"
    for attempt in range(first, first + MAX_COLLISIONS):
        path = archive_dir / (f"{base}.jsonl" if attempt == 0 else f"{base}-{attempt}.jsonl")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
        try:
            write_all(fd, body)
            if fsync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        os.close(fd)
        if fsync:
            fsync_dir(archive_dir)
        return path
    raise FileExistsError(f"no free archive name for {base} after {MAX_COLLISIONS} attempts")


def read_header(path: Path) -> dict[str, Any] | None:
    """An archive's line 0, or None when unreadable, not a regular file or not a header."""
    try:
        fd, _ = open_regular(path)
        with os.fdopen(fd, "rb") as fp:
            first = fp.readline(64 * 1024)
    except OSError:
        return None
    header, bad = parse_json_line(first.rstrip(b"\n"))
    if bad or not isinstance(header, dict) or header.get("_type") != RecordKind.ARCHIVE:
        return None
    return header


def read_archived_at(path: Path) -> datetime | None:
    """The header's ``archived_at`` (naive = local time), or None when unreadable."""
    header = read_header(path)
    return parse_ts(header.get("archived_at")) if header is not None else None


def is_unlanded(header: dict[str, Any] | None, current_gen: int) -> bool:
    """Whether the rewrite that wrote this archive never replaced the file (a crash between):
    its ``generation`` is past the file's, so the archived rows are all still in the file."""
    produced = (header or {}).get("generation")
    return type(produced) is int and produced > current_gen


class Membership(enum.Enum):
    """Whether an archive's rows are part of its session now (THE rule every reader uses)."""

    SESSION = "session"  # a rotate archive whose rewrite landed: its rows come first
    SET_ASIDE = "set_aside"  # another reason (a rewind's): kept on disk for recovery only
    UNLANDED = "unlanded"  # its rewrite never replaced the file: its rows are still there


def membership(header: dict[str, Any] | None, current_gen: int) -> Membership:
    """The archive with this header (``None``/``{}``: no header) against the file's ``gen``."""
    header = header or {}
    if header.get("reason", ROTATE_REASON) != ROTATE_REASON:
        return Membership.SET_ASIDE
    if is_unlanded(header, current_gen):
        return Membership.UNLANDED
    return Membership.SESSION


@dataclass(frozen=True, slots=True)
class RetentionDecision:
    path: Path
    archived_at: datetime | None
    expired: bool  # False with archived_at None: undatable archives are kept
    skipped: str = ""  # why a non-regular entry was neither read nor deleted


def cleanup_archives(
    archive_dir: Path, retention_days: int, now: datetime, *, dry_run: bool
) -> list[RetentionDecision]:
    """Delete archives whose header says they are older than ``retention_days`` (negative:
    never). Returns every decision; a dry run deletes nothing."""
    if retention_days < 0 or not archive_dir.is_dir():
        return []
    cutoff = now.astimezone() - timedelta(days=retention_days)
    decisions = []
    files, skipped = regular_files(archive_dir)
    for path in files:
        archived_at = read_archived_at(path)
        expired = archived_at is not None and archived_at < cutoff
        decisions.append(RetentionDecision(path, archived_at, expired))
        if expired and not dry_run:
            path.unlink(missing_ok=True)
    return decisions + [RetentionDecision(s.path, None, False, s.reason) for s in skipped]
