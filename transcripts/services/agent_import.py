"""Import Claude Code and Codex CLI session files into the store (``import_transcripts``).

Sources are converted, not copied: their rows take the store's append path (write-boundary
redaction, the content rule). A state file per source (``.agent-imports/``) keeps its
identity, the byte offset read and the converter's state, so a re-run reads only what was
appended since. Sources are opened read-only, under an ``flock``, so a ``--follow`` and a
manual run never read the same records. Under that lock a batch is written ahead, appended,
mirrored and its state recorded; many new sources are first read, converted, redacted and
encoded by forked workers (``prepare``), whose bytes then take that same path.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar, cast

import msgspec
import orjson
from django.db import DatabaseError, transaction

from ..core import fsutil, locking
from ..core.agents.prepare import Job, Prepared, encoded, prepare
from ..core.agents.source import (
    CONVERTERS,
    Batch,
    Pending,
    SourceState,
    convert_range,
    detect_lines,
    format_warning,
    head_lines,
    key_refusal,
    new_state,
    no_conversation_outcome,
    prefix_crc,
    session_key,
    session_metadata,
    source_format,
    state_after,
    tail_digest,
)
from ..core.errors import LockTimeout, TranscriptError
from ..core.fsutil import atomic_write, kind_of, open_regular
from ..core.importfiles import ImportRefused, check_size
from ..core.keys import slot_name_for_key
from ..core.redaction import prefilter
from ..models import App, Slot
from ..runtime import get_store
from ..signals import rows_appended, turn_ended
from .announce import announce
from .errors import ImportSourceError
from .importing import (
    FileOutcome,
    ImportResult,
    ImportStatus,
    Progress,
    import_max_bytes,
    import_workers,
    session_import_paths,
    session_index,
    skipped_file,
)
from .sessions import session_append_rows
from .sync import DiskState

REPLACED = "a different file now has this path; not re-imported"
LOST_STATE = (
    "its session is in the store but this file's import state is lost, so how far it was "
    "read is unknown; not imported again (delete the session to import the file afresh)"
)
STATE_DIR = ".agent-imports"
PENDING_SUFFIX = ".pending"  # the write-ahead record beside a state file
LOCK_TIMEOUT_S = locking.DEFAULT_TIMEOUT_S  # waiting for another importer of a source
CLEAN_STOP = "end_turn"  # what the turn API stores at a clean turn end
PARALLEL_MIN_FILES = 8  # fewer new sources: the workers' start-up is not worth it
ORPHAN_CHECK_S = 0.5


@dataclass(frozen=True, slots=True)
class _Run:
    """What every file of one run shares."""

    fmt: str  # asked for: claude-code | codex | auto
    app: App | None
    dry_run: bool
    announce: bool  # --follow: rows announced as they land
    frames: bool  # turn ends push a WebSocket frame
    kiro: list[Path] = field(default_factory=list)  # our own format: the ordinary import's


def walk(source: Path, result: ImportResult) -> Iterator[tuple[Path, os.stat_result | None]]:
    """``.jsonl`` files under ``source`` (recursively), never through a link, each with
    its ``lstat`` (None for a named file: its open judges it)."""
    if not os.path.lexists(source):
        raise ImportSourceError(f"{source} does not exist")
    if not source.is_dir() or source.is_symlink():
        if _named_in_utf8(source, result):
            yield source, None
        return
    for root, dirs, files in os.walk(source, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".jsonl") and not name.startswith("."):
                path = Path(os.path.join(root, name))
                try:
                    st = os.lstat(path)
                except FileNotFoundError:
                    continue  # removed since the listing (an agent's own cleanup)
                except OSError as exc:
                    _bad(result, path, f"unreadable: {exc.strerror or exc}")
                    continue
                if not stat.S_ISREG(st.st_mode):  # lstat: a link is not a regular file
                    _bad(result, path, f"not a regular file: {kind_of(st.st_mode)}")
                elif _named_in_utf8(path, result):
                    yield path, st


def _named_in_utf8(path: Path, result: ImportResult) -> bool:
    """False (and the file reported bad) when its path is not valid UTF-8 (legal on
    Linux): its path goes into the session's metadata and every report as text."""
    try:
        os.fspath(path).encode()
    except UnicodeEncodeError:
        _bad(result, path, "its path is not valid UTF-8; rename it to import it")
        return False
    return True


def _bad(result: ImportResult, path: Path, reason: str) -> None:
    """A walked file reported bad, its path shown with non-UTF-8 bytes as U+FFFD."""
    label = os.fsencode(path).decode(errors="replace")
    result.outcomes.append(FileOutcome(label, ImportStatus.BAD, reason=reason))


def state_dir() -> Path:
    return get_store().root / STATE_DIR


def _state_file(path: Path, directory: Path | None) -> str:
    # os.path, not pathlib: a re-run over an unchanged tree does this once per source.
    # ``str(path.absolute())`` (no normalisation of ".."), as state files always were named;
    # fsencode: the name's bytes, also when they are not UTF-8 (``encode()``'s otherwise).
    name = os.fspath(path)
    if not os.path.isabs(name):
        name = os.path.join(os.getcwd(), name)
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:32]
    return os.path.join(directory or state_dir(), f"{digest}.json")


def state_path(path: Path) -> Path:
    return Path(_state_file(path, None))


def pending_path(path: Path, directory: Path | None = None) -> Path:
    """The write-ahead record of a batch, removed once its state is recorded: a run killed
    (or failing in the database) in between leaves it for the next run to settle."""
    return Path(_state_file(path, directory) + PENDING_SUFFIX)


_Stored = TypeVar("_Stored", SourceState, Pending)


def _read(name: str, kind: type[_Stored]) -> _Stored | None:
    """The record in ``name``; None when it is missing, torn or not of this shape
    (``msgspec.convert`` checks each field and fills defaults older states lack)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        value = orjson.loads(os.read(fd, os.fstat(fd).st_size + 1))
    except orjson.JSONDecodeError:
        return None
    finally:
        os.close(fd)
    try:
        return msgspec.convert(value, kind) if isinstance(value, dict) else None
    except msgspec.ValidationError:
        return None


def _save(target: Path, value: SourceState | Pending) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # Through the module: ``atomic_write`` here is the store writes' (tests count those).
    fsutil.atomic_write(target, orjson.dumps(value), fsync=False)


def load_state(path: Path, directory: Path | None = None) -> SourceState | None:
    return _read(_state_file(path, directory), SourceState)


def save_state(path: Path, state: SourceState) -> None:
    _save(state_path(path), state)


def drop_pending(path: Path) -> None:
    pending_path(path).unlink(missing_ok=True)


def _write(path: Path, batch: Batch, state: SourceState, fresh: bool, run: _Run) -> tuple[str, ...]:
    """One store write of the batch's rows and one transaction for the mirror. A
    ``fresh`` key is encoded as one new session file (``_create``, as a worker's), unless
    past the store's rotation size: then the store's append writes it (rotating at once)."""
    store, key = get_store(), state.key
    meta: dict[str, Any] = {}
    if fresh:
        meta = session_metadata(state, path, batch.rows, run.app.name if run.app else None)
        prepared = encoded(path, state, batch, meta, store.clock(), store.max_line, run.announce)
        if len(prepared.blob) <= store.max_bytes:
            return _create(prepared, run)
    warnings: tuple[str, ...] = ()
    with transaction.atomic():
        if fresh:
            appended = store.append_rows(key, batch.rows, metadata=meta)
            _, warnings = session_index(key=key, app=run.app)
        else:
            appended = session_append_rows(key=key, rows=batch.rows)
        roles = [r["role"] for r in batch.rows] if run.announce else []
        _announce(key, appended.ts, roles, bool(batch.turn_ends), run)
    return warnings


def _create(prepared: Prepared, run: _Run) -> tuple[str, ...]:
    """A new session encoded whole: its bytes linked into place (never over a file of
    that key: ``FileExistsError``), and its mirror from what was written."""
    store = get_store()
    key, target = prepared.state.key, store.path(prepared.state.key)
    atomic_write(target, prepared.blob, fsync=store.fsync.on_append, exclusive=True)
    st = os.stat(target)
    # The file as written, or folded: another writer may have appended since the link.
    state = (
        None
        if st.st_size != len(prepared.blob)
        else DiskState(
            key=key,
            metadata=prepared.metadata,
            sig=st.st_mtime_ns,
            gen=0,
            size=st.st_size,
            inode=st.st_ino,
            row_count=prepared.row_count,
            user_turns=prepared.user_turns,
            last_activity=prepared.last_activity,
            anomaly_counts={},
        )
    )
    with transaction.atomic():
        _, warnings = session_index(key=key, app=run.app, state=state)
        _announce(key, prepared.stamps, prepared.roles, bool(prepared.turn_ends), run)
    return warnings


def _announce(key: str, stamps: list[str], roles: list[str], ended: bool, run: _Run) -> None:
    """After commit: the rows (``--follow``) and a turn end, as the turn API's: a clean stop
    recorded, then the gated pass, which reads the current state, so one per batch will do."""
    if run.announce and stamps:
        announce(rows_appended, Slot, slot_name=slot_name_for_key(key), ts=stamps, roles=roles)
    if ended:
        _turn_end(key, run.frames)


def _turn_end(key: str, frames: bool) -> None:
    """A clean stop, announced after commit: every receiver asks for the gated summary pass.
    Without ``frames`` (a one-off import, not --follow) the turn end is ``quiet``: no
    WebSocket frame per session."""
    Slot.objects.filter(session__key=key).update(running=False, last_stop_reason=CLEAN_STOP)
    name = slot_name_for_key(key)
    announce(turn_ended, Slot, slot_name=name, stop_reason=CLEAN_STOP, quiet=not frames)


def _import_file(path: Path, run: _Run, prepared: Prepared | None = None) -> FileOutcome:
    label = str(path)
    try:
        fd, st = open_regular(path)
    except OSError as exc:
        return skipped_file(label, exc)
    try:
        check_size(st.st_size, import_max_bytes())
        # One importer per source at a time (a --follow and a manual run): each reads the
        # offset the other left, never the same records twice. The source itself is held
        # (``flock`` on its read-only fd, advisory: it needs no lock file of its own).
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        locking.wait_flock(fd, deadline, "another import of this source is running")
        try:
            return _import_open(path, fd, st, run, prepared)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    except ImportRefused as exc:
        return skipped_file(label, exc)
    except LockTimeout:
        return FileOutcome(
            label, ImportStatus.UNCHANGED, reason="another import of this file is running"
        )
    finally:
        os.close(fd)


def _unchanged(
    path: Path, st: os.stat_result | None, state: SourceState | None, limit: int
) -> FileOutcome | None:
    """A source read to its end already, judged from the walk's ``lstat`` and its state read
    without the lock, so an unchanged tree costs no open. Anything else (a moved mtime, a
    state without one, or one being written right now) takes the locked path."""
    if st is None or state is None or st.st_size > limit or st.st_size != state.offset:
        return None
    if (state.dev, state.ino, state.mtime_ns) != (st.st_dev, st.st_ino, st.st_mtime_ns):
        return None
    return FileOutcome(str(path), ImportStatus.UNCHANGED, state.key)


def _import_open(
    path: Path, fd: int, st: os.stat_result, run: _Run, prepared: Prepared | None
) -> FileOutcome:
    label, fmt = str(path), run.fmt
    _settle_pending(path, run.app)
    state = load_state(path)
    detected = True
    if state is not None:
        key = state.key
        if (state.dev, state.ino) != (st.st_dev, st.st_ino):
            return FileOutcome(label, ImportStatus.BAD, key, REPLACED)
        if st.st_size < state.offset:
            reason = "the source file shrank; not re-imported"
            return FileOutcome(label, ImportStatus.BAD, key, reason)
        # The bytes before the offset are no longer those digested: reading on would start
        # mid-stream. A state without a digest (written before fingerprints) trusts its
        # offset and gains one here.
        tail = tail_digest(fd, state.offset)
        if state.tail is not None and state.tail != tail:
            return FileOutcome(label, ImportStatus.BAD, key, REPLACED)
        if st.st_size == state.offset:
            # Its mtime moved: whether any byte read differs now, by the state's ``crc``
            # (one read of the file, only in this case). A file that also grew is judged by
            # the 4 KiB tail alone: reading every grown file whole on every poll would make
            # a follow O(file).
            moved = state.mtime_ns != st.st_mtime_ns and state.crc is not None
            if moved and prefix_crc(fd, 0, state.offset) != state.crc:
                return FileOutcome(label, ImportStatus.BAD, key, REPLACED)
            touched = replace(state, mtime_ns=st.st_mtime_ns, tail=tail)
            if touched != state and not run.dry_run:
                # Touched, or a state from before fingerprints: the next run is stat-only.
                save_state(path, touched)
            return FileOutcome(label, ImportStatus.UNCHANGED, key)
        if not get_store().exists(key):  # deleted here on purpose: not brought back
            reason = "its session was deleted from the store; not re-imported"
            return FileOutcome(label, ImportStatus.UNCHANGED, key, reason)
        fmt = state.format
    elif prepared is not None and _still_as_read(prepared, st):
        # Read, converted and encoded by a worker: only its bytes are written here.
        write = partial(_create, prepared, run)
        ended = bool(prepared.turn_ends)
        return _record(path, prepared.state, ended, write, prepared.state.tally, prepared.warnings)
    else:
        head = head_lines(fd, st.st_size)
        found, detected = source_format(head, fmt)
        if found is None:
            if not head:
                return FileOutcome(label, ImportStatus.UNCHANGED, reason="no complete line yet")
            return FileOutcome(label, ImportStatus.BAD, reason="format not recognised")
        if fmt == "auto" and found == "kirocrew":
            run.kiro.append(path)
            return FileOutcome(label, ImportStatus.DELEGATED)
        if found not in CONVERTERS or (fmt != "auto" and found != fmt):
            hint = (  # not converted: this project's own format, under --format claude-code
                "import it without --format, or with --format auto"
                if found not in CONVERTERS
                else f"use --format {found} or auto"
            )
            return FileOutcome(
                label, ImportStatus.BAD, reason=f"looks like {found}, not {fmt} ({hint})"
            )
        fmt = found
        state = new_state(fmt, path, st)
    batch = convert_range(fd, state.offset, st.st_size, fmt, state.conv)
    new = not state.key
    empty = no_conversation_outcome(fd, st.st_size, batch, fmt, detected) if new else None
    if empty is not None:  # junk or not a session yet: nothing stored, no state kept
        status, reason = empty
        return FileOutcome(
            label, ImportStatus(status), reason=reason, anomalies=dict(sorted(batch.tally.items()))
        )
    key = state.key or session_key(fmt, path, state.conv)
    refusal = key_refusal(key) if new else None
    if refusal is not None:
        return FileOutcome(label, ImportStatus.BAD, reason=refusal)
    warnings = format_warning(batch, fmt)
    after = state_after(state, key, batch, fd, st)
    # The report tallies this run's records ("imported=2" for a run that added two); an
    # unchanged file's line (-v 2) shows the running total.
    this_run = dict(sorted(batch.tally.items())) if batch.tally else after.tally
    other = get_store().read_metadata(key) if new else None
    if other is not None and other.get("source_path") != str(path.absolute()):
        reason = f"{key} was already imported from {other.get('source_path')}"
        return FileOutcome(label, ImportStatus.BAD, key, reason)
    if other is not None:
        # Imported from this very file, and its state is gone (cleared, or a backup
        # restored without it): how far it was read is unknown, and reading it again from
        # the start would append every record a second time. A killed run's batch never
        # lands here: its write-ahead record is settled first.
        return FileOutcome(label, ImportStatus.BAD, key, LOST_STATE)
    if run.dry_run or batch.offset == state.offset:
        status = ImportStatus.UNCHANGED if batch.offset == state.offset else ImportStatus.IMPORTED
        return FileOutcome(label, status, key, anomalies=this_run, warnings=tuple(warnings))
    write = partial(_write, path, batch, after, new, run)
    return _record(path, after, bool(batch.turn_ends), write, this_run, warnings)


def _record(
    path: Path,
    state: SourceState,
    ended: bool,
    write: Callable[[], tuple[str, ...]],
    tally: dict[str, int],
    warnings: list[str],
) -> FileOutcome:
    """``write`` the batch that leads the source to ``state``, then record that state.
    Written ahead (``pending_path``): the state, and the store file as it was before the
    batch, for ``_settle_pending``."""
    label, key = str(path), state.key
    size, inode = _store_mark(key)
    _save(pending_path(path), Pending(state, size, inode, ended))
    try:
        written = write()
    except (TranscriptError, DatabaseError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return FileOutcome(label, ImportStatus.BAD, key, f"not written: {first}")
    except OSError as exc:  # a new session's file not created (its key taken meanwhile)
        drop_pending(path)  # nothing of it landed: a file there now is another's
        return FileOutcome(label, ImportStatus.BAD, key, f"not written: {exc.strerror or exc}")
    save_state(path, state)
    drop_pending(path)
    notes = (*warnings, *written)
    return FileOutcome(label, ImportStatus.IMPORTED, key, anomalies=tally, warnings=notes)


def _still_as_read(prepared: Prepared, st: os.stat_result) -> bool:
    """The source the worker read (same file; appends since are read by the next run)
    and whose key no session has: anything else is read here, which decides it."""
    state = prepared.state
    same = (st.st_dev, st.st_ino) == (state.dev, state.ino)
    return same and st.st_size >= state.offset and not get_store().exists(state.key)


def _store_mark(key: str) -> tuple[int, int | None]:
    """The session file's size and inode (0, None when there is none yet)."""
    try:
        st = os.stat(get_store().path(key))
    except FileNotFoundError:
        return 0, None
    return st.st_size, st.st_ino


def _settle_pending(path: Path, app: App | None) -> None:
    """A batch the last run wrote ahead and never recorded: when the store file grew (or
    was rotated, which only follows an append) since, it landed, so the mirror is rebuilt
    from the file (its transaction may not have committed), its turn end recorded and its
    state taken; otherwise it is read again. Under the source lock, and only the importer
    appends to an imported session, so growth is this batch's."""
    pending = _read(str(pending_path(path)), Pending)
    if pending is not None:
        target, current = pending.next, load_state(path)
        if current is None or current.offset < target.offset:
            size, inode = _store_mark(target.key)
            if inode is not None and (inode != pending.store_ino or size > pending.store_size):
                with transaction.atomic():
                    session_index(key=target.key, app=app)
                    if pending.ended:
                        _turn_end(target.key, frames=False)
                save_state(path, target)
    drop_pending(path)  # none, torn, recorded by a later run, or settled now


def prepared_in_workers(
    files: list[Path], fmt: str, app: App | None, announce: bool
) -> Iterator[Prepared]:
    """``prepare`` of each new source in forked worker processes (``import_workers``),
    each result as it comes. A source the worker declined (not a clean new session), whose
    reading raised, or whose worker died is missing: the caller reads it itself."""
    store = get_store()
    job = Job(
        fmt=fmt,
        limit=import_max_bytes(),
        max_bytes=store.max_bytes,
        max_line=store.max_line,
        app_name=app.name if app is not None else None,
        clock=store.clock,
        stamps=announce,
    )
    prefilter.available()  # compiled once here, inherited by every forked worker
    # Forked: the job (a test's clock too) and the settings are inherited, not pickled;
    # only a path goes down and a Prepared comes back.
    pool = ProcessPoolExecutor(
        max_workers=min(import_workers(), len(files)),
        mp_context=get_context("fork"),
        initializer=_worker_start,
        initargs=(job, os.getpid()),
    )
    try:
        for future in as_completed([pool.submit(_prepare, path) for path in files]):
            # An exception: the reading raised, or its worker died (BrokenProcessPool).
            prepared = future.result() if future.exception() is None else None
            if prepared is not None:
                yield prepared
    finally:
        # On any error of the caller's too: nothing queued starts, the workers end.
        pool.shutdown(wait=True, cancel_futures=True)


_job: Job | None = None  # a worker's, set once as it starts


def _worker_start(job: Job, importer: int) -> None:
    global _job
    _job = job
    # Ctrl-C reaches the whole process group: the importer alone answers it (and stops
    # its workers), so the terminal shows one interruption, not one per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(importer,), daemon=True).start()


def _end_with(importer: int) -> None:
    """A worker whose importer died (SIGKILL: no shutdown reached it) would wait for work
    forever on a queue it holds both ends of: it ends once it is reparented."""
    while os.getppid() == importer:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(0)


def _prepare(path: Path) -> Prepared | None:
    return prepare(path, cast(Job, _job))  # set by _worker_start


def agent_import_paths(
    *,
    paths: Sequence[Path],
    fmt: str = "auto",
    app: App | None = None,
    dry_run: bool = False,
    announce: bool = False,
    progress: Progress | None = None,
) -> ImportResult:
    """Import every ``.jsonl`` under ``paths`` in ``fmt`` (or each file's detected format);
    in ``auto`` mode files in this project's own format go to the ordinary import. Each
    outcome's ``anomalies`` is its source's tally: every record lands in one bucket."""
    result = ImportResult(dry_run=dry_run)
    found = [f for source in paths for f in walk(Path(source), result)]
    directory, limit = state_dir(), import_max_bytes()
    states = {path: load_state(path, directory) for path, _ in found}
    new = [path for path, _ in found if states[path] is None]
    many = not dry_run and len(new) >= PARALLEL_MIN_FILES
    # A one-off import of many new sessions pushes no turn frame per session (a dashboard
    # learns of them on its next read); a --follow, or a run of a few, does.
    run = _Run(fmt, app, dry_run, announce, frames=announce or not many)
    early: dict[Path, FileOutcome] = {}
    for prepared in prepared_in_workers(new, fmt, app, announce) if many else ():
        early[prepared.path] = _import_file(prepared.path, run, prepared)
    for done, (path, st) in enumerate(found, 1):
        outcome = (
            early.get(path) or _unchanged(path, st, states[path], limit) or _import_file(path, run)
        )
        if outcome.status != ImportStatus.DELEGATED:
            result.outcomes.append(outcome)
            if progress is not None:
                progress(done, len(found), outcome)
    if run.kiro:
        result.outcomes += session_import_paths(paths=run.kiro, app=app, dry_run=dry_run).outcomes
    return result


def import_format_default(paths: Sequence[Path]) -> str:
    """The format an import without ``--format`` reads PATHs in: ``auto`` when a session
    file under them (walked as an agent import walks them) is another agent's, so a Claude
    Code project folder is converted, not copied as rows of nothing; else ``kirocrew``.
    Stops at the first such file; a missing PATH is the ordinary import's to report."""
    scratch = ImportResult(dry_run=True)
    for source in paths:
        try:
            found = list(walk(Path(source), scratch))
        except ImportSourceError:
            continue
        for path, _ in found:
            try:
                fd, st = open_regular(path)
            except OSError:
                continue
            try:
                kind = detect_lines(head_lines(fd, min(st.st_size, import_max_bytes())))
            finally:
                os.close(fd)
            if kind in CONVERTERS:
                return "auto"
    return "kirocrew"
