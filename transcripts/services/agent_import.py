"""Import Claude Code and Codex CLI session files into the store (``import_transcripts``).

Sources are CONVERTED, not copied: each record becomes rows of this project's format and
goes through the store's append path, so write-boundary redaction and the content rule
apply as to any other row. Per source file a small state file under the store
(``.agent-imports/``) holds its identity (device, inode), the byte offset read so far and
the converter's state, so a re-run reads only what was appended since (``agent_sources``).
The source files are only ever opened read-only.

One path for every source: under the source's lock, a batch is written ahead (the state it
leads to), appended, mirrored, and its state recorded. A run with many new sources has
them read, converted, redacted and encoded by worker processes first (``agent_workers``);
each result then takes that same path, which only writes its bytes instead of converting
the source here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from django.db import DatabaseError, transaction

from ..core.agents.fingerprint import prefix_crc, tail_digest
from ..core.agents.prepare import Prepared, encoded
from ..core.agents.source import (
    CONVERTERS,
    Batch,
    convert_range,
    format_warning,
    head_lines,
    key_refusal,
    new_state,
    no_conversation_outcome,
    session_key,
    session_metadata,
    session_title,
    source_format,
    state_after,
)
from ..core.agents.state import Pending, SourceState
from ..core.errors import LockTimeout, TranscriptError
from ..core.fsutil import NotRegularFile, atomic_write, open_regular
from ..core.importfiles import ImportRefused, check_size
from ..models import App
from ..runtime import get_store
from . import agent_workers
from .agent_sources import (
    announce_rows,
    announce_turn_end,
    drop_pending,
    landed_batch_settle,
    load_pending,
    load_state,
    mark_clean_stop,
    save_pending,
    save_state,
    source_lock,
    state_dir,
    walk,
)
from .importing import (
    FileOutcome,
    ImportResult,
    ImportStatus,
    import_max_bytes,
    session_import_paths,
    session_index,
)
from .sessions import session_append_rows
from .sync import DiskState

Progress = Callable[[int, int, FileOutcome], None]
REPLACED = "a different file now has this path; not re-imported"
LOST_STATE = (
    "its session is in the store but this file's import state is lost, so how far it was "
    "read is unknown; not imported again (delete the session to import the file afresh)"
)


def _write(
    path: Path,
    batch: Batch,
    state: SourceState,
    meta: dict[str, Any],
    fresh: bool,
    app: App | None,
    announce: bool,
    frames: bool,
) -> list[str]:
    """One store write of the batch's rows and one transaction for the mirror.

    ``fresh``: the key has no transcript yet, so line 0 and every row are encoded as one
    new session file (``_create``, as a worker's), and the mirror is built from what was
    written. Past the store's rotation size the store's own append writes it (it rotates
    at once) and the mirror is folded from disk.
    """
    store = get_store()
    key = state.key
    if fresh:
        prepared = encoded(path, state, batch, meta, store.clock(), store.max_line, announce)
        if len(prepared.blob) <= store.max_bytes:
            return _create(prepared, app, announce, frames)
    warnings: tuple[str, ...] = ()
    with transaction.atomic():
        if fresh:
            appended = store.append_rows(key, batch.rows, metadata=meta)
            _, warnings = session_index(key=key, app=app)
        else:
            appended = session_append_rows(key=key, rows=batch.rows)
        roles = [r["role"] for r in batch.rows] if announce else []
        _announce(key, appended.ts, roles, bool(batch.turn_ends), announce, frames)
    return list(warnings)


def _create(prepared: Prepared, app: App | None, announce: bool, frames: bool) -> list[str]:
    """A new session encoded whole: its bytes linked into place (never over a file of
    that key: ``FileExistsError``), and its mirror from what was written."""
    store = get_store()
    key, target = prepared.key, store.path(prepared.key)
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
        _, warnings = session_index(key=key, app=app, state=state)
        ended = bool(prepared.turn_ends)
        _announce(key, prepared.stamps, prepared.roles, ended, announce, frames)
    return list(warnings)


def _announce(
    key: str, stamps: list[str], roles: list[str], ended: bool, announce: bool, frames: bool
) -> None:
    """After commit: the rows (``--follow``) and a turn end. The turn API's turn end: the
    slot records a clean stop (the summary gate's stop_reason check), then the gated pass
    runs after commit. It reads the current state, so one pass per batch covers every
    turn the batch ended."""
    if announce and stamps:
        transaction.on_commit(partial(announce_rows, key, stamps, roles))
    if ended:
        mark_clean_stop(key)
        transaction.on_commit(partial(announce_turn_end, key, frames))


def _import_file(
    path: Path,
    fmt: str,
    app: App | None,
    dry_run: bool,
    announce: bool,
    kiro: list[Path],
    prepared: Prepared | None = None,
    frames: bool = True,
) -> FileOutcome:
    label = str(path)
    try:
        fd, st = open_regular(path)
    except NotRegularFile as exc:
        return FileOutcome(label, ImportStatus.BAD, reason=exc.reason)
    except OSError as exc:
        return FileOutcome(label, ImportStatus.BAD, reason=f"unreadable: {exc.strerror or exc}")
    try:
        check_size(st.st_size, import_max_bytes())
        # One importer per source at a time (a --follow and a manual run): each reads the
        # offset the other left, never the same records twice.
        with source_lock(fd):
            return _import_open(path, fd, st, fmt, app, dry_run, announce, kiro, prepared, frames)
    except ImportRefused as exc:
        return FileOutcome(label, ImportStatus.BAD, reason=str(exc))
    except LockTimeout:
        return FileOutcome(
            label, ImportStatus.UNCHANGED, reason="another import of this file is running"
        )
    finally:
        os.close(fd)


def _unchanged(
    path: Path, st: os.stat_result | None, state: SourceState | None, limit: int
) -> FileOutcome | None:
    """A source read to its end already, judged from the walk's ``lstat`` and its state
    read without the lock: a re-run over an unchanged tree costs no open of the source.
    Anything else (or a state being written right now) takes the locked path, and so does
    a moved mtime (a same-size rewrite, a re-created file on a reused inode) or a state
    without one (written before fingerprints: it gains one there)."""
    if st is None or state is None or st.st_size > limit:
        return None
    if (state.dev, state.ino, state.mtime_ns) != (st.st_dev, st.st_ino, st.st_mtime_ns):
        return None
    if st.st_size != state.offset:
        return None
    return FileOutcome(str(path), ImportStatus.UNCHANGED, state.key)


def _import_open(
    path: Path,
    fd: int,
    st: os.stat_result,
    fmt: str,
    app: App | None,
    dry_run: bool,
    announce: bool,
    kiro: list[Path],
    prepared: Prepared | None = None,
    frames: bool = True,
) -> FileOutcome:
    label = str(path)
    _settle_pending(path, app)
    state = load_state(path)
    detected = True
    if state is not None:
        key = state.key
        if (state.dev, state.ino) != (st.st_dev, st.st_ino):
            return FileOutcome(label, ImportStatus.BAD, key, REPLACED)
        if st.st_size < state.offset:
            reason = "the source file shrank; not re-imported"
            return FileOutcome(label, ImportStatus.BAD, key, reason)
        fingerprinted = _fingerprint(fd, st, state)
        if fingerprinted is None:  # the bytes already read changed: not this file any more
            return FileOutcome(label, ImportStatus.BAD, key, REPLACED)
        if st.st_size == state.offset:
            if _rewritten_in_place(fd, st, state):
                return FileOutcome(label, ImportStatus.BAD, key, REPLACED)
            if fingerprinted != state and not dry_run:
                # Touched, or a state from before fingerprints: the next run is stat-only.
                save_state(path, fingerprinted)
            return FileOutcome(label, ImportStatus.UNCHANGED, key)
        if not get_store().exists(key):  # deleted here on purpose: not brought back
            reason = "its session was deleted from the store; not re-imported"
            return FileOutcome(label, ImportStatus.UNCHANGED, key, reason)
        fmt = state.format
    elif prepared is not None and _still_as_read(prepared, st):
        # Read, converted and encoded by a worker: only its bytes are written here.
        key, ended = prepared.key, bool(prepared.turn_ends)
        write = partial(_create, prepared, app, announce, frames)
        warnings = _record(path, prepared.state, ended, write)
        if isinstance(warnings, str):
            return FileOutcome(label, ImportStatus.BAD, key, warnings)
        notes = tuple(prepared.warnings) + tuple(warnings)
        return FileOutcome(
            label, ImportStatus.IMPORTED, key, anomalies=prepared.counts, warnings=notes
        )
    else:
        head = head_lines(fd, st.st_size)
        found, detected = source_format(head, fmt)
        if found is None:
            if not head:
                return FileOutcome(label, ImportStatus.UNCHANGED, reason="no complete line yet")
            return FileOutcome(label, ImportStatus.BAD, reason="format not recognised")
        if fmt == "auto" and found == "kirocrew":
            kiro.append(path)
            return FileOutcome(label, ImportStatus.DELEGATED)
        if found not in CONVERTERS:  # this project's own format, under --format claude-code
            hint = "import it without --format, or with --format auto"
            return FileOutcome(
                label, ImportStatus.BAD, reason=f"looks like {found}, not {fmt} ({hint})"
            )
        if fmt != "auto" and found != fmt:
            hint = f"use --format {found} or auto"
            return FileOutcome(
                label, ImportStatus.BAD, reason=f"looks like {found}, not {fmt} ({hint})"
            )
        fmt = found
        state = new_state(fmt, path, st)
    batch = convert_range(fd, state.offset, st.st_size, fmt, state.conv)
    prov = state.conv.prov
    new = not state.key
    empty = no_conversation_outcome(fd, st.st_size, batch, fmt, detected) if new else None
    if empty is not None:  # junk or not a session yet: nothing stored, no state kept
        status, reason = empty
        return FileOutcome(
            label, ImportStatus(status), reason=reason, anomalies=dict(sorted(batch.tally.items()))
        )
    key = state.key or session_key(fmt, path, prov, state.conv.sidechain)
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
        return FileOutcome(
            label,
            ImportStatus.BAD,
            key,
            f"{key} was already imported from {other.get('source_path')}",
        )
    if other is not None:
        # Imported from this very file, and its state is gone (cleared, or a backup
        # restored without it): how far it was read is unknown, and reading it again from
        # the start would append every record a second time. A killed run's batch never
        # lands here: its write-ahead record is settled first.
        return FileOutcome(label, ImportStatus.BAD, key, LOST_STATE)
    if dry_run or batch.offset == state.offset:
        status = ImportStatus.UNCHANGED if batch.offset == state.offset else ImportStatus.IMPORTED
        return FileOutcome(label, status, key, anomalies=this_run, warnings=tuple(warnings))
    title = session_title(batch.rows, prov, state.conv.titles)
    meta = session_metadata(key, fmt, path, prov, title, app.name if app else None)
    write = partial(_write, path, batch, after, meta, new, app, announce, frames)
    written = _record(path, after, bool(batch.turn_ends), write)
    if isinstance(written, str):
        return FileOutcome(label, ImportStatus.BAD, key, written)
    warnings += written
    return FileOutcome(
        label, ImportStatus.IMPORTED, key, anomalies=this_run, warnings=tuple(warnings)
    )


def _record(
    path: Path, state: SourceState, ended: bool, write: Callable[[], list[str]]
) -> list[str] | str:
    """``write`` the batch that leads the source to ``state``, then record that state;
    the write's warnings, or why it was not written (this file only; the run goes on).

    Write-ahead: the state this batch leads to, and the store file as it was before it.
    Killed between the write and the state (or failing in the database after the
    write), the next run finds it and settles it instead of writing the batch again."""
    size, inode = _store_mark(state.key)
    save_pending(path, Pending(state, size, inode, ended))
    try:
        warnings = write()
    except (TranscriptError, DatabaseError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"not written: {first}"
    except OSError as exc:  # a new session's file not created (its key taken meanwhile)
        drop_pending(path)  # nothing of it landed: a file there now is another's
        return f"not written: {exc.strerror or exc}"
    save_state(path, state)
    drop_pending(path)
    return warnings


def _still_as_read(prepared: Prepared, st: os.stat_result) -> bool:
    """The source the worker read (same file; appends since are read by the next run)
    and whose key no session has: anything else is read here, which decides it."""
    state = prepared.state
    same = (st.st_dev, st.st_ino) == (state.dev, state.ino)
    return same and st.st_size >= state.offset and not get_store().exists(prepared.key)


def _rewritten_in_place(fd: int, st: os.stat_result, state: SourceState) -> bool:
    """A source of the size its state read whose mtime moved: whether any byte it read
    differs now (a same-size edit of an earlier record), by the state's ``crc`` of all
    of them. One read of the file, only in this case; a touch reads it once and then its
    state takes the new mtime. A file that also grew is judged by the 4 KiB ``tail``
    alone (reading every grown file whole on every poll would make a follow O(file))."""
    if state.mtime_ns == st.st_mtime_ns or state.crc is None:
        return False
    return prefix_crc(fd, 0, state.offset) != state.crc


def _fingerprint(fd: int, st: os.stat_result, state: SourceState) -> SourceState | None:
    """The state with the source's fingerprint at its offset, or None when it has one and
    the bytes before its offset are no longer those it digested (rewritten in place,
    re-created on a reused inode, truncated and regrown: reading on would start
    mid-stream). A state without one (written before fingerprints) trusts its offset, as
    every state did, and gains it here. One pread of at most ``TAIL_BYTES``."""
    tail = tail_digest(fd, state.offset)
    if state.tail is not None and state.tail != tail:
        return None
    return replace(state, mtime_ns=st.st_mtime_ns, tail=tail)


def _store_mark(key: str) -> tuple[int, int | None]:
    """The session file's size and inode (0, None when there is none yet)."""
    try:
        st = os.stat(get_store().path(key))
    except FileNotFoundError:
        return 0, None
    return st.st_size, st.st_ino


def _settle_pending(path: Path, app: App | None) -> None:
    """A batch the last run wrote ahead and never recorded: when the store file grew (or
    was rotated, which only follows an append) since, the batch landed, so its state is
    taken and the mirror rebuilt from the file (its transaction may not have committed);
    otherwise nothing of it landed and the batch is read again. Under the source lock, and
    imported sessions are appended only by their importer, so growth is this batch's."""
    pending = load_pending(path)
    if pending is None:  # none, or not one (torn): nothing to settle
        drop_pending(path)
        return
    target, current = pending.next, load_state(path)
    if current is not None and current.offset >= target.offset:
        drop_pending(path)  # a later run recorded it already
        return
    size, inode = _store_mark(target.key)
    landed = inode is not None and (inode != pending.store_ino or size > pending.store_size)
    if landed:
        landed_batch_settle(path, target.key, target, pending.ended, app)
    drop_pending(path)


def agent_import_paths(
    *,
    paths: Sequence[Path],
    fmt: str = "auto",
    app: App | None = None,
    dry_run: bool = False,
    announce: bool = False,
    progress: Progress | None = None,
) -> ImportResult:
    """Import every ``.jsonl`` under ``paths`` in ``fmt`` (or each file's detected format).

    ``anomalies`` of each outcome is the tally of the whole source so far: every record
    is imported, dropped by a named rule, unknown or foreign (reported) or a bad line.
    In ``auto`` mode files in this project's own format go to the ordinary import.
    """
    result = ImportResult(dry_run=dry_run)
    found = [f for source in paths for f in walk(Path(source), result)]
    directory, limit = state_dir(), import_max_bytes()
    states = {path: load_state(path, directory) for path, _ in found}
    new = [path for path, _ in found if states[path] is None]
    many = not dry_run and len(new) >= agent_workers.PARALLEL_MIN_FILES
    # A one-off import of many new sessions pushes no turn frame per session (a dashboard
    # learns of them on its next read); a --follow, or a run of a few, does.
    frames = announce or not many
    kiro: list[Path] = []
    early: dict[Path, FileOutcome] = {}
    for prepared in agent_workers.prepared_in_workers(new, fmt, app, announce) if many else ():
        path = prepared.path
        early[path] = _import_file(path, fmt, app, dry_run, announce, kiro, prepared, frames)
    files = [path for path, _ in found]
    for done, (path, st) in enumerate(found, 1):
        outcome = (
            early.get(path)
            or _unchanged(path, st, states[path], limit)
            or _import_file(path, fmt, app, dry_run, announce, kiro, None, frames)
        )
        if outcome.status != ImportStatus.DELEGATED:
            result.outcomes.append(outcome)
            if progress is not None:
                progress(done, len(files), outcome)
    if kiro:
        result.outcomes += session_import_paths(paths=kiro, app=app, dry_run=dry_run).outcomes
    return result
