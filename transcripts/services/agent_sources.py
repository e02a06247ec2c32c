"""The agent import's sources: the walk, the per-source state files, the source lock and
the after-commit announcements (``agent_import.py``).

Per source file a small state file under the store (``.agent-imports/``) holds its
identity (device, inode), the byte offset read so far and the converter's state, so a
re-run reads only what was appended since. Whoever imports a source holds an ``flock``
on the source itself, so a ``--follow`` and a manual run never read the same records.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from django.db import transaction

from ..core import locking
from ..core.agents.detect import detect_lines
from ..core.agents.source import CONVERTERS, head_lines
from ..core.agents.state import Pending, SourceState, pending_record, source_state
from ..core.errors import LockTimeout
from ..core.fsutil import atomic_write, kind_of, open_regular
from ..core.keys import slot_name_for_key
from ..models import App, Slot
from ..runtime import get_store
from ..signals import rows_appended, turn_ended
from .errors import ImportSourceError
from .importing import FileOutcome, ImportResult, ImportStatus, import_max_bytes, session_index

STATE_DIR = ".agent-imports"
LOCK_TIMEOUT_S = locking.DEFAULT_TIMEOUT_S  # waiting for another importer of a source
CLEAN_STOP = "end_turn"  # what the turn API stores at a clean turn end


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
                    continue  # removed since the listing (an agent's own cleanup): nothing to import
                except OSError as exc:
                    reason = f"unreadable: {exc.strerror or exc}"
                    result.outcomes.append(
                        FileOutcome(_label(path), ImportStatus.BAD, reason=reason)
                    )
                    continue
                if not stat.S_ISREG(st.st_mode):  # lstat: a link is not a regular file
                    reason = f"not a regular file: {kind_of(st.st_mode)}"
                    result.outcomes.append(
                        FileOutcome(_label(path), ImportStatus.BAD, reason=reason)
                    )
                elif _named_in_utf8(path, result):
                    yield path, st


def _named_in_utf8(path: Path, result: ImportResult) -> bool:
    """False (and the file reported bad) when its path is not valid UTF-8 (legal on
    Linux): its path goes into the session's metadata and every report as text."""
    try:
        os.fspath(path).encode()
    except UnicodeEncodeError:
        reason = "its path is not valid UTF-8; rename it to import it"
        result.outcomes.append(FileOutcome(_label(path), ImportStatus.BAD, reason=reason))
        return False
    return True


def _label(path: Path) -> str:
    """The path as printable text: bytes that are not UTF-8 shown as U+FFFD."""
    return os.fsencode(path).decode(errors="replace")


def state_dir() -> Path:
    return get_store().root / STATE_DIR


def state_path(path: Path, directory: Path | None = None) -> Path:
    return Path(_state_file(path, directory))


def _state_file(path: Path, directory: Path | None) -> str:
    # os.path, not pathlib: a re-run over an unchanged tree does this once per source.
    # ``str(path.absolute())`` (no normalisation of ".."), as state files always were named.
    name = os.fspath(path)
    if not os.path.isabs(name):
        name = os.path.join(os.getcwd(), name)
    # fsencode: the name's bytes on disk, also when they are not UTF-8 (the same bytes
    # as ``encode()`` for every name that is, so existing state files keep their names).
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:32]
    return os.path.join(directory or state_dir(), f"{digest}.json")


@contextlib.contextmanager
def source_lock(fd: int) -> Iterator[None]:
    """Hold the source itself (``flock`` on its read-only fd): one importer per source at
    a time, so a ``--follow`` and a manual run each read the offset the other left. The
    lock is advisory and changes nothing in the file; it needs no lock file of its own.
    ``LockTimeout`` after ``LOCK_TIMEOUT_S``."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    pause = locking.POLL_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout("another import of this source is running") from None
            time.sleep(pause)
            pause = min(pause * 2, locking.POLL_MAX_S)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def load_state(path: Path, directory: Path | None = None) -> SourceState | None:
    return source_state(_read_dict(_state_file(path, directory)))


def save_state(path: Path, state: SourceState, directory: Path | None = None) -> None:
    _write(state_path(path, directory), state)


def _read_dict(name: str) -> dict[str, Any] | None:
    """The JSON object in ``name``; None when it is missing, torn or not an object."""
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
    return value if isinstance(value, dict) else None


def _write(target: Path, value: SourceState | Pending) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, orjson.dumps(value), fsync=False)


# Written before a batch goes to the store, removed once the state records it: a run
# killed (or failing in the database) in between leaves it, and the next run of the source
# settles it from the store (``agent_import._settle_pending``) instead of appending the
# same records a second time.
PENDING_SUFFIX = ".pending"


def pending_path(path: Path, directory: Path | None = None) -> Path:
    return Path(_state_file(path, directory) + PENDING_SUFFIX)


def save_pending(path: Path, record: Pending) -> None:
    _write(pending_path(path), record)


def load_pending(path: Path) -> Pending | None:
    return pending_record(_read_dict(_state_file(path, None) + PENDING_SUFFIX))


def drop_pending(path: Path) -> None:
    pending_path(path).unlink(missing_ok=True)


def mark_clean_stop(key: str) -> None:
    """What the turn API records at a clean turn end: the slot stopped, ``end_turn`` (the
    summary gate's stop_reason check reads it)."""
    Slot.objects.filter(session__key=key).update(running=False, last_stop_reason=CLEAN_STOP)


def landed_batch_settle(
    source: Path, key: str, state: SourceState, ended: bool, app: App | None = None
) -> None:
    """A batch found in the store whose run died before recording it (its write-ahead
    record): the mirror indexed from the file, the clean turn end it would have recorded
    and announced, then its state."""
    with transaction.atomic():
        session_index(key=key, app=app)
        if ended:
            mark_clean_stop(key)
            transaction.on_commit(partial(announce_turn_end, key, False))
    save_state(source, state)


def announce_rows(key: str, ts: list[str], roles: list[str]) -> None:
    rows_appended.send_robust(sender=Slot, slot_name=slot_name_for_key(key), ts=ts, roles=roles)


def announce_turn_end(key: str, frames: bool) -> None:
    """The turn API's turn end: every receiver asks for the gated summary pass.

    Without ``frames`` (a one-off import, not --follow) the turn end is ``quiet``: the
    dashboards get no WebSocket frame per imported session (the issue: frames only when
    following); the summary pass is asked for all the same.
    """
    name = slot_name_for_key(key)
    turn_ended.send_robust(sender=Slot, slot_name=name, stop_reason=CLEAN_STOP, quiet=not frames)


def import_format_default(paths: Sequence[Path]) -> str:
    """The format an import without ``--format`` reads PATHs in: ``auto`` when a session
    file under them (the agents' own trees are walked, as an agent import walks them) is
    another agent's, so a Claude Code project folder is converted, not copied as rows of
    nothing; else ``kirocrew`` (this project's own transcripts, archives included).
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
