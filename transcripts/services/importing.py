"""Import a sessions directory into the store and index it (``import_transcripts``).

Files from elsewhere are copied in (never over a different file), the store's own indexed
in place; one whose (mtime_ns, size, inode) match its row costs one ``stat``. A bad file
is reported and skipped, never aborting the run.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.db import DatabaseError, transaction

from ..core.agents.source import CONVERTERS, HEAD_LINES, detect_lines
from ..core.archive import archive_stem
from ..core.codec import MAX_LINE_BYTES
from ..core.fold import fold_stream
from ..core.fsutil import NotRegularFile, Skipped, kind_of, open_regular, regular_files
from ..core.importfiles import ImportRefused, archive_owner, check_size, copy_new, nul_warnings
from ..core.keys import is_valid_slot_name, safe_key, slot_name_for_key
from ..core.reader import parse_metadata_line
from ..core.store import TranscriptStore
from ..models import App, Session, Slot
from ..runtime import get_store
from .errors import ImportSourceError
from .sync import DiskState, disk_state, key_for_file, session_sync


class ImportStatus(StrEnum):
    """What an import did with one file (equal to its word: reports print it as is)."""

    IMPORTED = "imported"
    UNCHANGED = "unchanged"
    BAD = "bad"
    CONFLICT = "conflict"
    COPIED = "copied"  # an archive
    PRESENT = "present"  # an archive already in the store
    DELEGATED = "delegated"  # an agent import's file in this project's format: imported here


@dataclass(frozen=True, slots=True)
class FileOutcome:
    file: str
    status: ImportStatus
    key: str = ""
    reason: str = ""
    anomalies: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(slots=True)
class ImportResult:
    dry_run: bool
    outcomes: list[FileOutcome] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    def with_status(self, *statuses: str) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status in statuses]


Progress = Callable[[int, int, FileOutcome], None]


@dataclass(frozen=True, slots=True)
class _Candidate:
    label: str
    read: Path  # the file to read (the source itself in a dry run that copies nothing)
    target: Path  # where it lives (or would live) in the store
    copied: bool = False  # copied into the store by this run
    archives: tuple[Path, ...] = ()  # archives copied with it: they leave with a bad file


CONFLICT_REASON = "a different file of that name is already in the store"
SKIPPED = (ImportRefused, OSError)  # a file refused, not a regular file, or unreadable


def skipped_file(label: str, exc: Exception) -> FileOutcome:
    if isinstance(exc, NotRegularFile):
        reason = exc.reason
    elif isinstance(exc, OSError):
        reason = f"unreadable: {exc.strerror or exc}"
    else:
        reason = str(exc)
    return FileOutcome(label, ImportStatus.BAD, reason=reason)


def import_max_bytes() -> int:
    """``KIROCREW_IMPORT_MAX_BYTES``: larger files (by apparent size) are skipped."""
    return int(settings.KIROCREW_IMPORT_MAX_BYTES)


MAX_IMPORT_WORKERS = 8  # past this the importer's own share (~1 ms a session) bounds a run


def import_workers() -> int:
    """``KIROCREW_IMPORT_WORKERS``, or (0, the default) one per core this process may run
    on (its affinity: a container's quota, not the host's), at most ``MAX_IMPORT_WORKERS``."""
    asked = int(settings.KIROCREW_IMPORT_WORKERS)
    if asked > 0:
        return asked
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_IMPORT_WORKERS))


def _skipped(result: ImportResult, entries: list[Skipped], prefix: str = "") -> None:
    for entry in entries:
        result.outcomes.append(
            FileOutcome(prefix + entry.path.name, ImportStatus.BAD, reason=entry.reason)
        )


def _gather(
    source: Path, store: TranscriptStore, result: ImportResult, limit: int
) -> list[_Candidate]:
    root = store.root.resolve()
    if source.resolve() == root:
        files, skipped = regular_files(root)
        _skipped(result, skipped)
        return [_Candidate(p.name, p, p) for p in files]
    archives: list[Path] = []
    if source.is_dir():
        transcripts, skipped = regular_files(source)
        _skipped(result, skipped)
        archive_dir = source / "archive"
        mode = os.lstat(archive_dir).st_mode if os.path.lexists(archive_dir) else None
        if mode is not None and stat.S_ISDIR(mode):
            archives, skipped = regular_files(archive_dir)
            _skipped(result, skipped, "archive/")
        elif mode is not None:
            reason = f"not a directory: {kind_of(mode)}"
            result.outcomes.append(FileOutcome("archive", ImportStatus.BAD, reason=reason))
    elif source.suffix == ".jsonl" and os.path.lexists(source):
        transcripts = [source]  # opened without following a link, like every other file
    else:
        raise ImportSourceError(f"{source} is neither a directory nor a .jsonl file")
    candidates = []
    for path in transcripts:
        dest = root / path.name
        status = _try_copy(result, path.name, path, dest, limit)
        if status == "conflict":
            result.outcomes.append(
                FileOutcome(path.name, ImportStatus.CONFLICT, reason=CONFLICT_REASON)
            )
        elif status:
            read = dest if dest.exists() else path
            candidates.append(_Candidate(path.name, read, dest, copied=status == "copied"))
    new = {c.target.name for c in candidates if c.copied}
    brought: dict[str, list[Path]] = {}
    for archive in archives:
        label, stem = f"archive/{archive.name}", archive_stem(archive.name)
        owner, refuse = "", "not an archive name (<stem>__YYYYMMDD-HHMMSS[-N].jsonl)"
        if stem is not None:
            owner, refuse = archive_owner(stem, root, new)
        dest = store.archive_dir / archive.name
        status = _try_copy(result, label, archive, dest, limit, refuse)
        if status:
            reason = CONFLICT_REASON if status == "conflict" else ""
            result.outcomes.append(FileOutcome(label, ImportStatus(status), reason=reason))
        if status == "copied":
            brought.setdefault(owner, []).append(dest)
    return [replace(c, archives=tuple(brought.get(c.target.name, ()))) for c in candidates]


def _try_copy(
    result: ImportResult, label: str, src: Path, dest: Path, limit: int, refuse: str = ""
) -> str:
    """``copy_new``'s status, or "" when the file was skipped (its outcome recorded)."""
    try:
        return copy_new(src, dest, dry_run=result.dry_run, limit=limit, refuse=refuse)
    except SKIPPED as exc:
        result.outcomes.append(skipped_file(label, exc))
        return ""


def session_import_paths(
    *,
    paths: Sequence[Path] = (),
    app: App | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportResult:
    """Import each PATH (default: the store's own directory) and index every transcript:
    regular files only, each at most ``KIROCREW_IMPORT_MAX_BYTES``; archives only with
    their own new session file."""
    store = get_store()
    store.root.mkdir(parents=True, exist_ok=True)
    result = ImportResult(dry_run=dry_run)
    limit = import_max_bytes()
    seen: dict[Path, _Candidate] = {}
    for source in paths or [store.root]:
        for candidate in _gather(Path(source), store, result, limit):
            seen.setdefault(candidate.target, candidate)
    known = {
        row[0]: row[1:]
        for row in Session.objects.values_list(
            "safe_key", "file_mtime_ns", "file_size", "file_inode", "app_id", "key"
        )
    }
    candidates = list(seen.values())
    for done, candidate in enumerate(candidates, 1):
        stem = candidate.target.name.removesuffix(".jsonl")
        outcome = _index(candidate, known.get(stem), app, dry_run, limit)
        if outcome.status == "bad" and candidate.copied and not dry_run:
            # A bad file stays out of the store, and so do the archives it brought.
            for path in (candidate.target, *candidate.archives):
                path.unlink(missing_ok=True)
        result.outcomes.append(outcome)
        if progress is not None:
            progress(done, len(candidates), outcome)
    return result


def _index(
    candidate: _Candidate, row: tuple[Any, ...] | None, app: App | None, dry: bool, limit: int
) -> FileOutcome:
    label, path = candidate.label, candidate.read
    try:
        st = os.lstat(path)
    except OSError as exc:
        return skipped_file(label, exc)
    same = row is not None and tuple(row[:3]) == (st.st_mtime_ns, st.st_size, st.st_ino)
    if row is not None and same and path == candidate.target:
        claim = not dry and app is not None and row[3] != app.pk
        warnings = _claim_owner(row[4], app) if claim and app is not None else ()
        return FileOutcome(label, ImportStatus.UNCHANGED, warnings=warnings)
    if not stat.S_ISREG(st.st_mode):  # the lstat above, not a second one
        return FileOutcome(
            label, ImportStatus.BAD, reason=f"not a regular file: {kind_of(st.st_mode)}"
        )
    if st.st_size == 0:
        return FileOutcome(label, ImportStatus.BAD, reason="empty file")
    try:
        check_size(st.st_size, limit)
        fd, _ = open_regular(path)
        with os.fdopen(fd, "rb") as fp:
            metadata = parse_metadata_line(fp.readline(MAX_LINE_BYTES))
            other = None if metadata is not None else _agent_format(fp)
            if other is not None:  # stored as ours it is rows of nothing: say what fits
                return FileOutcome(label, ImportStatus.BAD, reason=other)
            key = key_for_file(candidate.target, metadata)
            if safe_key(key) != candidate.target.name.removesuffix(".jsonl"):
                return FileOutcome(
                    label, ImportStatus.BAD, key, "the file name is not <safe_key>.jsonl"
                )
            if dry:
                fp.seek(0)
                folded = fold_stream(fp, file=label)
                if metadata is None and not folded.rows:
                    return FileOutcome(
                        label, ImportStatus.BAD, key, "line 0 is not metadata and no rows"
                    )
                counts = folded.report.counts()
                return FileOutcome(label, ImportStatus.IMPORTED, key, anomalies=counts)
        state = disk_state(key)
    except SKIPPED as exc:
        return skipped_file(label, exc)
    if state.metadata is None and state.row_count == 0:
        return FileOutcome(label, ImportStatus.BAD, key, "line 0 is not metadata and no rows")
    notes = nul_warnings(metadata)
    try:
        with transaction.atomic():  # a refused write rolls back alone; the run goes on
            _, warnings = session_index(key=key, app=app, state=state)
    except (DatabaseError, OverflowError) as exc:  # e.g. PostgreSQL's DataError
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = f"the database refused it: {first}"
        return FileOutcome(label, ImportStatus.BAD, key, reason)
    return FileOutcome(
        label, ImportStatus.IMPORTED, key, anomalies=state.anomaly_counts, warnings=notes + warnings
    )


def _agent_format(fp: BinaryIO) -> str | None:
    """Why a file without our line 0 is another agent's session rather than a transcript
    (with the ``--format`` that reads it), or None."""
    fp.seek(0)
    head: list[bytes] = []
    for _ in range(HEAD_LINES * 4):  # bounded reads: a line may be megabytes of image data
        line = fp.readline(MAX_LINE_BYTES)
        if not line or len(head) >= HEAD_LINES:
            break
        if line.strip():
            head.append(line)
    fp.seek(0)
    found = detect_lines(head)
    if found in CONVERTERS:
        return f"looks like {found}, not a Kiro Crew transcript (use --format {found} or auto)"
    if found == "codex-legacy":
        return "looks like a legacy Codex session, which is not read"
    return None


def session_index(
    *, key: str, app: App | None = None, state: DiskState | None = None
) -> tuple[Session, tuple[str, ...]]:
    """Upsert the mirror of an on-disk transcript and its slot; returns warnings too. A
    new row's owner is ``app``, else the app line 0 names."""
    state = state or disk_state(key)
    owner = app or _app_named((state.metadata or {}).get("app"))
    with transaction.atomic():
        session = session_sync(key=key, app=owner, force=True, state=state)
        warnings = _claim_owner(key, app) if app is not None else ()
        warnings += _ensure_slot(session)
    session.refresh_from_db()
    return session, warnings


def _app_named(name: Any) -> App | None:
    if not isinstance(name, str) or not name or "\x00" in name:  # no app name holds NUL
        return None
    return App.objects.filter(name=name).first()


def _claim_owner(key: str, app: App) -> tuple[str, ...]:
    """``--app`` owns an unscoped session; a session another app owns is left alone."""
    session = Session.objects.filter(key=key).first()
    if session is None or session.app_id == app.pk:
        return ()
    if session.app_id is not None:
        return (f"owned by another app; --app {app.name} not applied",)
    Session.objects.filter(pk=session.pk).update(app=app)
    Slot.objects.filter(session_id=session.pk).update(app=app)
    return ()


def _ensure_slot(session: Session) -> tuple[str, ...]:
    """One slot per session, named by the key without ``dashboard:``."""
    slot = Slot.objects.filter(session=session).first()
    if slot is not None:
        if slot.app_id != session.app_id:
            Slot.objects.filter(pk=slot.pk).update(app_id=session.app_id)
        return ()
    name = slot_name_for_key(session.key)
    if not is_valid_slot_name(name):  # an import warning, not an error
        return (f"no slot: {name!r} is not a valid slot name",)
    if Slot.objects.filter(name=name).exists():
        return (f"no slot: the slot name {name!r} is taken",)
    Slot.objects.create(name=name, session=session, app_id=session.app_id)
    return ()
