"""Import a sessions directory into the store and index it (``import_transcripts``).

Files from another directory are copied into the store (never over a different file);
files already in the store are indexed in place. A file whose (mtime_ns, size, inode)
match its ``Session`` row is unchanged and costs one ``stat``. A bad file is reported and
skipped; it never aborts the run.
"""

from __future__ import annotations

import filecmp
import os
import secrets
import shutil
import stat
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from ..core.archive import DELIMITER
from ..core.fold import fold_stream
from ..core.keys import BARE_PREFIX, is_valid_slot_name, safe_key, slot_name_for_key
from ..core.reader import read_line0
from ..core.store import TranscriptStore
from ..models import App, Session, Slot
from ..store import get_store
from .errors import ImportSourceError
from .sync import DiskState, disk_state, key_for_file, session_sync


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """``status``: imported | unchanged | bad | conflict (transcripts); copied | present (archives)."""

    file: str
    status: str
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


def _copy_new(src: Path, dest: Path, *, dry_run: bool) -> str:
    """Copy ``src`` to ``dest`` unless something is there: copied | present | conflict."""
    if dest.exists():
        return "present" if filecmp.cmp(src, dest, shallow=False) else "conflict"
    if dry_run:
        return "copied"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.import-{secrets.token_hex(4)}")
    shutil.copy2(src, tmp)  # keeps the mtime: the original's sig survives the move
    try:
        os.link(tmp, dest)  # atomic and never overwrites, unlike a rename
    except FileExistsError:
        return "present" if filecmp.cmp(src, dest, shallow=False) else "conflict"
    finally:
        tmp.unlink(missing_ok=True)
    return "copied"


def _gather(
    source: Path, store: TranscriptStore, result: ImportResult, forced: set[str]
) -> list[_Candidate]:
    root = store.root.resolve()
    if source.resolve() == root:
        return [_Candidate(p.name, p, p) for p in sorted(root.glob("*.jsonl"))]
    if source.is_dir():
        transcripts = sorted(source.glob("*.jsonl"))
        archives = sorted((source / "archive").glob("*.jsonl"))
    elif source.is_file() and source.suffix == ".jsonl":
        transcripts, archives = [source], []
    else:
        raise ImportSourceError(f"{source} is neither a directory nor a .jsonl file")
    dry_run = result.dry_run
    for archive in archives:
        label = f"archive/{archive.name}"
        try:
            status = _copy_new(archive, store.archive_dir / archive.name, dry_run=dry_run)
        except OSError as exc:
            result.outcomes.append(FileOutcome(label, "bad", reason=f"unreadable: {exc}"))
            continue
        result.outcomes.append(FileOutcome(label, status, reason=_reason(status)))
        if status == "copied":
            forced.add(archive.name.split(DELIMITER, 1)[0])
    candidates = []
    for path in transcripts:
        dest = root / path.name
        try:
            status = _copy_new(path, dest, dry_run=dry_run)
        except OSError as exc:
            result.outcomes.append(FileOutcome(path.name, "bad", reason=f"unreadable: {exc}"))
            continue
        if status == "conflict":
            result.outcomes.append(FileOutcome(path.name, "conflict", reason=_reason(status)))
            continue
        read = dest if dest.exists() else path
        candidates.append(_Candidate(path.name, read, dest, copied=status == "copied"))
    return candidates


def _reason(status: str) -> str:
    return "a different file of that name is already in the store" if status == "conflict" else ""


def session_import_paths(
    *,
    paths: Sequence[Path] = (),
    app: App | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportResult:
    """Import each PATH (default: the store's own directory) and index every transcript."""
    store = get_store()
    store.root.mkdir(parents=True, exist_ok=True)
    result = ImportResult(dry_run=dry_run)
    forced: set[str] = set()  # stems that gained an archive in this run
    seen: dict[Path, _Candidate] = {}
    for source in paths or [store.root]:
        for candidate in _gather(Path(source), store, result, forced):
            seen.setdefault(candidate.target, candidate)
    for stem in sorted(forced):  # archives arrived for a transcript already in the store
        for name in (f"{stem}.jsonl", f"{BARE_PREFIX}{stem}.jsonl"):
            path = store.root / name
            if path.is_file():
                seen.setdefault(path, _Candidate(name, path, path))
    known = {
        row[0]: row[1:]
        for row in Session.objects.values_list(
            "safe_key", "file_mtime_ns", "file_size", "file_inode", "app_id", "key"
        )
    }
    candidates = list(seen.values())
    for done, candidate in enumerate(candidates, 1):
        stem = candidate.target.name.removesuffix(".jsonl")
        is_forced = stem in forced or stem.removeprefix(BARE_PREFIX) in forced
        outcome = _index(candidate, known.get(stem), is_forced, app, dry_run)
        if outcome.status == "bad" and candidate.copied and not dry_run:
            candidate.target.unlink(missing_ok=True)  # a bad file stays out of the store
        result.outcomes.append(outcome)
        if progress is not None:
            progress(done, len(candidates), outcome)
    return result


def _index(
    candidate: _Candidate, row: tuple[Any, ...] | None, forced: bool, app: App | None, dry: bool
) -> FileOutcome:
    label, path = candidate.label, candidate.read
    try:
        st = path.stat()
    except OSError as exc:
        return FileOutcome(label, "bad", reason=f"unreadable: {exc.strerror or exc}")
    same = row is not None and tuple(row[:3]) == (st.st_mtime_ns, st.st_size, st.st_ino)
    if row is not None and same and not forced and path == candidate.target:
        claim = not dry and app is not None and row[3] != app.pk
        warnings = _claim_owner(row[4], app) if claim and app is not None else ()
        return FileOutcome(label, "unchanged", warnings=warnings)
    if not stat.S_ISREG(st.st_mode):  # the stat above, not a second one
        return FileOutcome(label, "bad", reason="not a regular file")
    if st.st_size == 0:
        return FileOutcome(label, "bad", reason="empty file")
    try:
        metadata = read_line0(path)
        key = key_for_file(candidate.target, metadata)
        if safe_key(key) != candidate.target.name.removesuffix(".jsonl"):
            return FileOutcome(label, "bad", key, "the file name is not <safe_key>.jsonl")
        if dry:
            with path.open("rb") as fp:
                folded = fold_stream(fp, file=label)
            if metadata is None and not folded.rows:
                return FileOutcome(label, "bad", key, "line 0 is not metadata and no rows")
            return FileOutcome(label, "imported", key, anomalies=folded.report.counts())
        state = disk_state(key)
    except OSError as exc:
        return FileOutcome(label, "bad", reason=f"unreadable: {exc.strerror or exc}")
    if state.metadata is None and state.row_count == 0:
        return FileOutcome(label, "bad", key, "line 0 is not metadata and no rows")
    _, warnings = session_index(key=key, app=app, state=state)
    return FileOutcome(label, "imported", key, anomalies=state.anomaly_counts, warnings=warnings)


def session_index(
    *, key: str, app: App | None = None, state: DiskState | None = None
) -> tuple[Session, tuple[str, ...]]:
    """Upsert the mirror of an on-disk transcript and its slot; returns warnings too.

    The owner of a new row is ``app``, else the app named by line 0's ``app``.
    """
    state = state or disk_state(key)
    owner = app or _app_named((state.metadata or {}).get("app"))
    with transaction.atomic():
        session = session_sync(key=key, app=owner, force=True, state=state)
        warnings = _claim_owner(key, app) if app is not None else ()
        warnings += _ensure_slot(session)
    session.refresh_from_db()
    return session, warnings


def _app_named(name: Any) -> App | None:
    return App.objects.filter(name=name).first() if isinstance(name, str) and name else None


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
    if not is_valid_slot_name(name):
        return (f"no slot: {name!r} is not a valid slot name",)
    if Slot.objects.filter(name=name).exists():
        return (f"no slot: the slot name {name!r} is taken",)
    Slot.objects.create(name=name, session=session, app_id=session.app_id)
    return ()
