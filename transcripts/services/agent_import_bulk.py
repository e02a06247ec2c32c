"""The bulk first import: many new agent sessions at once, on every core.

Worker processes (``import_workers``: one per core by default) read, convert, redact and encode whole source files
(``core/agents/prepare.py``: the bytes ``append_rows`` would write for a new session)
and leave the session file and the source's state as temp files beside the journal;
this process puts them in place and writes the mirror, a batch at a time:

1. under each source's lock, a source that has a state by now, or whose key is already
   in the store, goes back to the ordinary path (it decides, as always);
2. a journal (``.agent-imports/journal/``) names the batch's sessions and their final
   source states, held by an ``flock`` while the batch runs;
3. each complete session file is hard-linked into place: a reader (or a crash) sees the
   whole session or none of it, and a key someone created meanwhile is never
   overwritten (that source goes back to the ordinary path);
4. one transaction creates the batch's ``Session`` and ``Slot`` rows from what was
   written (as ``_fresh_state`` does for one file); then the states are renamed into
   place and the journal removed.

A run killed anywhere leaves either nothing of a session, or a complete session file
that a journal names: the next run (``journal_replay``, first thing in every import)
indexes it from disk and writes its state, so nothing is lost and nothing is imported
twice. Turn ends ask for the summary pass once the run is written; frames only with
``--follow`` (a dashboard learns of a one-off bulk import on its next read).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from django.db import DatabaseError, transaction
from django.utils import timezone

from ..core.agents.prepare import Job, Prepared, prepare
from ..core.errors import LockTimeout
from ..core.fanout import fan_out
from ..core.fsutil import publish
from ..core.keys import slot_name_for_key
from ..core.redaction import prefilter
from ..models import App, Session, Slot
from ..runtime import get_store
from .agent_sources import (
    CLEAN_STOP,
    announce_rows,
    announce_turn_end,
    landed_batch_settle,
    load_state,
    mark_clean_stop,
    open_source,
    source_lock,
    state_dir,
    state_path,
)
from .importing import FileOutcome, import_max_bytes, import_workers, session_index, slot_refusal
from .rows_insert import rows_insert
from .sync import DiskState

BULK_MIN_FILES = 8  # fewer new files: the pool's start-up is not worth it
BATCH_FILES = 32  # sessions per transaction (and per journal): small enough to overlap
JOURNAL = "journal"


def bulk_import_new(
    files: list[Path], fmt: str, app: App | None, announce: bool
) -> dict[Path, FileOutcome]:
    """Import ``files`` (sources without a state); the outcome of each it imported.

    A file left out of the answer (not a clean new session, taken by another importer
    meanwhile, a key already in the store) is the ordinary path's to import.
    """
    directory = state_dir()
    store = get_store()
    spool = directory / JOURNAL
    spool.mkdir(parents=True, exist_ok=True)
    job = Job(
        fmt=fmt,
        limit=import_max_bytes(),
        max_bytes=store.max_bytes,
        max_line=store.max_line,
        app_name=app.name if app is not None else None,
        clock=store.clock,
        stamps=announce,
        spool=spool,
        fsync=store.fsync.on_append,
    )
    prefilter.available()  # compiled once here, inherited by every worker
    workers = min(import_workers(), len(files))  # never one with nothing to do
    outcomes: dict[Path, FileOutcome] = {}
    batch: list[Prepared] = []
    ended: list[Prepared] = []
    # Forked workers inherit the compiled prefilter and the settings; they never touch
    # the database connection (prepare is pure). A file whose prepare raised (a shape no
    # converter step foresaw) is missing from the results: the ordinary path meets it.
    try:
        with contextlib.closing(fan_out(partial(prepare, job=job), files, workers)) as results:
            for _, prepared in results:
                if prepared is not None:
                    batch.append(prepared)
                    if prepared.turn_ends:
                        ended.append(prepared)
                if len(batch) >= BATCH_FILES:
                    outcomes.update(_commit(batch, app, announce))
                    batch = []
        if batch:
            outcomes.update(_commit(batch, app, announce))
            batch = []
    finally:
        for item in batch:  # an error left them unwritten: the ordinary path retries
            item.discard()
    # Each turn end asks for the gated summary pass once the whole run is written: the
    # passes (queued, never run inline) then do not compete with the batches still to
    # commit for the database and the interpreter.
    for item in ended:
        outcome = outcomes.get(item.path)
        if outcome is not None and outcome.status == "imported":
            transaction.on_commit(partial(announce_turn_end, item.key, announce))
    return outcomes


def _commit(batch: list[Prepared], app: App | None, announce: bool) -> dict[Path, FileOutcome]:
    store = get_store()
    directory = state_dir()
    outcomes: dict[Path, FileOutcome] = {}
    with ExitStack() as held:
        ready: list[Prepared] = []
        for item in batch:
            if _claim(item, held, outcomes) and not store.exists(item.key):
                ready.append(item)
            else:
                item.discard()
        if not ready:
            return outcomes
        with _journal(directory, ready) as journal:
            written = [item for item in ready if _link(item)]
            try:
                with transaction.atomic():
                    warnings = _mirror(written, app, announce)
            except DatabaseError as exc:
                journal.keep()  # the next run's replay indexes them from disk
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                for item in written:
                    item.discard()
                    reason = f"not written: {first}"
                    outcomes[item.path] = FileOutcome(str(item.path), "bad", item.key, reason)
                return outcomes
            for item in written:
                publish(item.state_tmp, state_path(item.path, directory))
                notes = tuple(item.warnings) + warnings.get(item.key, ())
                outcomes[item.path] = FileOutcome(
                    str(item.path), "imported", item.key, anomalies=item.counts, warnings=notes
                )
    return outcomes


def _claim(item: Prepared, held: ExitStack, outcomes: dict[Path, FileOutcome]) -> bool:
    """Lock the source; True when it is still the file the worker read, with no state.

    Another importer may have taken this source since the worker read it: the ordinary
    path decides those (it reads the state that importer left)."""
    fd = open_source(item.path)
    if fd is None:
        return False
    held.callback(os.close, fd)
    try:
        held.enter_context(source_lock(fd))
    except LockTimeout:
        reason = "another import of this file is running"
        outcomes[item.path] = FileOutcome(str(item.path), "unchanged", reason=reason)
        return False
    st = os.fstat(fd)
    same = (st.st_dev, st.st_ino) == (item.state["dev"], item.state["ino"])
    return same and st.st_size >= item.state["offset"] and not state_path(item.path).exists()


def _link(item: Prepared) -> bool:
    """Link the worker's complete session file into place; False (the ordinary path
    takes the source) when a file of that key appeared meanwhile: a link never replaces."""
    try:
        os.link(item.session_tmp, get_store().path(item.key))
    except OSError:  # FileExistsError above all; any other: the ordinary path reports it
        item.discard()
        return False
    finally:
        item.session_tmp.unlink(missing_ok=True)
    return True


def _mirror(written: list[Prepared], app: App | None, announce: bool) -> dict[str, tuple[str, ...]]:
    """The batch's Session and Slot rows, as ``session_index`` makes them for one file."""
    warnings: dict[str, tuple[str, ...]] = {}
    existing = set(
        Session.objects.filter(key__in=[item.key for item in written]).values_list("key", flat=True)
    )
    app_id = app.pk if app is not None else None
    sessions: list[dict[str, Any]] = []
    for item in written:
        state = DiskState(
            key=item.key,
            metadata=item.metadata,
            sig=item.sig,
            gen=0,
            size=item.size,
            inode=item.inode,
            row_count=item.row_count,
            user_turns=item.user_turns,
            last_activity=item.last_activity,
            anomaly_counts={},
        )
        if item.key in existing:  # a stale row of an earlier session of this key
            warnings[item.key] = session_index(key=item.key, app=app, state=state)[1]
            if item.turn_ends:
                mark_clean_stop(item.key)
        else:
            created = state.created_at or timezone.now()
            fields = {"key": item.key, "app_id": app_id, "created_at": created}
            sessions.append(fields | state.fields())
    rows_insert(Session, sessions)
    keys = [session["key"] for session in sessions]
    ids = dict(Session.objects.filter(key__in=keys).values_list("key", "id"))
    names = {slot_name_for_key(key) for key in keys}
    taken = set(Slot.objects.filter(name__in=names).values_list("name", flat=True))
    slots: list[dict[str, Any]] = []
    ended = {item.key for item in written if item.turn_ends}
    for key in keys:
        name = slot_name_for_key(key)
        refusal = slot_refusal(name, taken.__contains__)
        if refusal is not None:
            warnings[key] = (refusal,)
        else:
            taken.add(name)
            stop = CLEAN_STOP if key in ended else ""
            slots.append(
                {"name": name, "session_id": ids[key], "app_id": app_id, "last_stop_reason": stop}
            )
    rows_insert(Slot, slots)
    for item in written:
        if announce and item.stamps:
            transaction.on_commit(partial(announce_rows, item.key, item.stamps, item.roles))
    return warnings


class _Journal:
    def __init__(self, fd: int, path: Path) -> None:
        self.fd, self.path, self.kept = fd, path, False

    def keep(self) -> None:
        self.kept = True


@contextlib.contextmanager
def _journal(directory: Path, items: list[Prepared]) -> Iterator[_Journal]:
    """The batch's journal, locked from before it has a name until it is removed."""
    folder = directory / JOURNAL
    entries = [
        {
            "source_path": str(item.path.absolute()),
            "key": item.key,
            "state": item.state,
            "turn_ends": item.turn_ends,
        }
        for item in items
    ]
    name = f"bulk-{os.getpid()}-{secrets.token_hex(6)}"
    tmp, final = folder / f".{name}.tmp", folder / f"{name}.json"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    journal = _Journal(fd, final)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # before the rename: a replay never sees it unlocked
        data = memoryview(orjson.dumps({"entries": entries}))
        while data:
            data = data[os.write(fd, data) :]
        publish(tmp, final)
        yield journal
        if not journal.kept:
            final.unlink(missing_ok=True)
    finally:
        tmp.unlink(missing_ok=True)
        os.close(fd)  # releases the flock


def journal_replay() -> None:
    """Finish what a killed bulk import left: index each complete session a journal names
    whose source has no state file yet, and write that state. Journals a live import
    holds (its flock) are left alone, and so are temp files of live processes."""
    folder = state_dir() / JOURNAL
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        path = folder / name
        if name.endswith(".json") and name.startswith("bulk-"):
            _replay_one(path)
        elif name.startswith(".") and name.endswith(".tmp") and not _alive(name):
            path.unlink(missing_ok=True)


def _alive(name: str) -> bool:
    """Whether the process that made this temp file (``.[bulk-]<pid>-<hex>.tmp``) runs."""
    pid = name.lstrip(".").removeprefix("bulk-").split("-", 1)[0]
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _replay_one(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a live import's batch
        if os.fstat(fd).st_nlink == 0:
            return  # finished (and removed) while this run waited for it
        try:
            entries = orjson.loads(path.read_bytes()).get("entries", [])
        except (orjson.JSONDecodeError, AttributeError):
            entries = []
        try:
            for entry in entries:
                _replay_entry(entry)
        except (DatabaseError, LockTimeout):
            return  # kept for the next run; this one imports the rest as usual
        path.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _replay_entry(entry: dict[str, Any]) -> None:
    source, key = Path(entry["source_path"]), entry["key"]
    fd = open_source(source)
    with contextlib.ExitStack() as held:
        if fd is not None:  # a source removed since cannot be imported by anyone else
            held.callback(os.close, fd)
            held.enter_context(source_lock(fd))
        if load_state(source) is not None:
            return  # the batch got that far
        metadata = get_store().read_metadata(key)
        if metadata is None or metadata.get("source_path") != str(source):
            return  # never linked (or not ours): the next import reads the source anew
        landed_batch_settle(source, key, entry["state"], bool(entry.get("turn_ends")))
