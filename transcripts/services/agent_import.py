"""Import Claude Code and Codex CLI session files into the store (``import_transcripts``).

Sources are CONVERTED, not copied: each record becomes rows of this project's format and
goes through the store's append path, so write-boundary redaction and the content rule
apply as to any other row. Per source file a small state file under the store
(``.agent-imports/``) holds its identity (device, inode), the byte offset read so far and
the converter's state, so a re-run reads only what was appended since. The source files
are only ever opened read-only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from django.db import DatabaseError, transaction

from ..core import locking
from ..core.agents import claude_code, codex
from ..core.agents.common import FOREIGN, Step, Tally, clean_text
from ..core.agents.detect import detect_lines
from ..core.agents.lines import complete_lines
from ..core.errors import LockTimeout, TranscriptError
from ..core.fsutil import NotRegularFile, atomic_write, kind_of, open_regular
from ..core.importfiles import ImportRefused, check_size
from ..core.keys import slot_name_for_key
from ..core.store import Appended
from ..core.user_turns import is_user_turn
from ..models import App, Slot
from ..runtime import get_store
from ..signals import rows_appended, turn_ended
from .errors import ImportSourceError
from .importing import (
    FileOutcome,
    ImportResult,
    import_max_bytes,
    session_import_paths,
    session_index,
)
from .sessions import session_append_rows
from .sync import DiskState, newest_ts

STATE_DIR = ".agent-imports"
CLEAN_STOP = "end_turn"  # what the turn API stores at a clean turn end
CONVERTERS: dict[str, Callable[[Any, dict[str, Any]], Step]] = {
    "claude-code": claude_code.convert,
    "codex": codex.convert,
}
Progress = Callable[[int, int, FileOutcome], None]


@dataclass(slots=True)
class _Batch:
    rows: list[dict[str, Any]] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    turn_ends: int = 0
    offset: int = 0
    foreign_at: int = 0  # first line number of another format (the format changed mid-way)


def _walk(source: Path, result: ImportResult) -> Iterator[Path]:
    """``.jsonl`` files under ``source`` (recursively), never through a link."""
    if not os.path.lexists(source):
        raise ImportSourceError(f"{source} does not exist")
    if not source.is_dir() or source.is_symlink():
        yield source
        return
    for root, dirs, files in os.walk(source, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".jsonl") and not name.startswith("."):
                path = Path(root) / name
                mode = os.lstat(path).st_mode
                if not stat.S_ISREG(mode):  # lstat: a link is not a regular file
                    result.outcomes.append(
                        FileOutcome(str(path), "bad", reason=f"not a regular file: {kind_of(mode)}")
                    )
                    continue
                yield path


def _state_path(path: Path) -> Path:
    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:32]
    return get_store().root / STATE_DIR / f"{digest}.json"


def _load_state(path: Path) -> dict[str, Any] | None:
    try:
        value = orjson.loads(_state_path(path).read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _head_lines(fd: int, size: int) -> list[bytes]:
    lines = []
    for line, _ in complete_lines(fd, 0, size):
        if line.strip():
            lines.append(line)
        if len(lines) >= 20:
            break
    return lines


def _convert(fd: int, start: int, end: int, fmt: str, conv: dict[str, Any]) -> _Batch:
    convert = CONVERTERS[fmt]
    batch = _Batch(offset=start)
    for number, (line, after) in enumerate(complete_lines(fd, start, end), 1):
        batch.offset = after
        if not line.strip():
            batch.tally["dropped:blank"] += 1
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            batch.tally["bad_line"] += 1
            continue
        step = convert(record, conv)
        batch.tally[step.bucket] += 1
        if step.bucket.startswith(FOREIGN) and not batch.foreign_at:
            batch.foreign_at = number
        batch.rows.extend(step.rows)
        batch.turn_ends += step.turn_end
    return batch


def _key(fmt: str, path: Path, prov: dict[str, Any], sidechain: bool) -> str:
    stem = path.name.removesuffix(".jsonl")
    if fmt == "codex":
        return f"codex:{prov.get('source_session_id') or stem}"
    if sidechain:
        return f"claude:{prov.get('source_session_id') or path.parent.name}:{stem}"
    return f"claude:{stem}"


def _title(rows: list[dict[str, Any]], prov: dict[str, Any]) -> str:
    for item in rows:
        if item["role"] == "user":
            return " ".join(str(item["content"]).split())[:80]
    return os.path.basename(str(prov.get("cwd") or "")) or "imported session"


def _metadata(
    key: str, fmt: str, path: Path, prov: dict[str, Any], title: str, app: App | None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "key": key,
        "title": title,
        "source": fmt,
        "source_path": str(path.absolute()),
    }
    meta.update({k: clean_text(v) for k, v in prov.items() if isinstance(v, str)})
    if app is not None:
        meta["app"] = app.name
    return meta


def _announce(key: str, ts: list[str], roles: list[str]) -> None:
    rows_appended.send_robust(sender=Slot, slot_name=slot_name_for_key(key), ts=ts, roles=roles)


def _turn_end(key: str) -> None:
    # The clean stop the slot row records below: what the summary gate reads.
    turn_ended.send_robust(sender=Slot, slot_name=slot_name_for_key(key), stop_reason=CLEAN_STOP)


def _fresh_state(
    key: str, rows: list[dict[str, Any]], appended: Appended, source_path: str
) -> DiskState | None:
    """The mirror of a session this import just created, from the rows it wrote.

    Replaces a full fold of the file just written. None (the caller folds) unless the
    file is exactly that write: line 0 ours (nobody created the key first), generation 0
    (no rotation moved rows to an archive) and the stat equal to the append's identity
    (no writer came in since). The counts are the fold's: every written row is a row
    (the content rule was checked before the write), redaction leaves user rows alone.
    """
    store = get_store()
    ident = appended.identity
    metadata = store.read_metadata(key)
    if metadata is None or metadata.get("source_path") != source_path or ident.gen != 0:
        return None
    try:
        st = os.stat(store.path(key))
    except FileNotFoundError:
        return None
    if (st.st_mtime_ns, st.st_size) != (ident.sig, ident.size):
        return None
    return DiskState(
        key=key,
        metadata=metadata,
        sig=ident.sig,
        gen=ident.gen,
        size=ident.size,
        inode=st.st_ino,
        row_count=len(rows),
        user_turns=sum(1 for row in rows if is_user_turn(row)),
        last_activity=newest_ts(list(appended.ts)),
        anomaly_counts={},
    )


def _write(
    key: str,
    batch: _Batch,
    meta: dict[str, Any],
    fresh: bool,
    new: bool,
    app: App | None,
    announce: bool,
) -> list[str]:
    """One store write of the batch's rows and one transaction for the mirror.

    ``fresh``: the key has no transcript yet, so line 0 and every row go out in one
    append and the mirror is built from those rows (no re-read of the file).
    """
    store = get_store()
    warnings: tuple[str, ...] = ()
    with transaction.atomic():
        if fresh:
            appended = store.append_rows(key, batch.rows, metadata=meta)
            state = _fresh_state(key, batch.rows, appended, meta["source_path"])
            _, warnings = session_index(key=key, app=app, state=state)
        elif new:  # the key exists from an earlier import of this path: fold it
            store.create(key, meta, exist_ok=True)
            appended = store.append_rows(key, batch.rows, create=False)
            _, warnings = session_index(key=key, app=app)
        else:
            appended = session_append_rows(key=key, rows=batch.rows)
        if announce and appended.ts:
            roles = [r["role"] for r in batch.rows]
            transaction.on_commit(partial(_announce, key, appended.ts, roles))
        if batch.turn_ends:
            # The turn API's turn end: the slot records a clean stop (the summary gate's
            # stop_reason check), then the gated pass runs after commit. It reads the
            # current state, so one pass per batch covers every turn the batch ended.
            Slot.objects.filter(session__key=key).update(running=False, last_stop_reason=CLEAN_STOP)
            transaction.on_commit(partial(_turn_end, key))
    return list(warnings)


def _import_file(
    path: Path, fmt: str, app: App | None, dry_run: bool, announce: bool, kiro: list[Path]
) -> FileOutcome:
    label = str(path)
    try:
        fd, st = open_regular(path)
    except NotRegularFile as exc:
        return FileOutcome(label, "bad", reason=exc.reason)
    except OSError as exc:
        return FileOutcome(label, "bad", reason=f"unreadable: {exc.strerror or exc}")
    try:
        check_size(st.st_size, import_max_bytes())
        state_dir = _state_path(path).parent
        state_dir.mkdir(parents=True, exist_ok=True)
        # One importer per source at a time (a --follow and a manual run): each reads the
        # offset the other left, never the same records twice.
        with locking.hold(str(_state_path(path)) + ".lock"):
            return _import_open(path, fd, st, fmt, app, dry_run, announce, kiro)
    except ImportRefused as exc:
        return FileOutcome(label, "bad", reason=str(exc))
    except LockTimeout:
        return FileOutcome(label, "unchanged", reason="another import of this file is running")
    finally:
        os.close(fd)


def _import_open(
    path: Path,
    fd: int,
    st: os.stat_result,
    fmt: str,
    app: App | None,
    dry_run: bool,
    announce: bool,
    kiro: list[Path],
) -> FileOutcome:
    label = str(path)
    state = _load_state(path)
    if state is not None:
        if (state.get("dev"), state.get("ino")) != (st.st_dev, st.st_ino):
            return FileOutcome(
                label,
                "bad",
                state.get("key", ""),
                "a different file now has this path; not re-imported",
            )
        if st.st_size < state["offset"]:
            return FileOutcome(
                label, "bad", state["key"], "the source file shrank; not re-imported"
            )
        if st.st_size == state["offset"]:
            return FileOutcome(label, "unchanged", state["key"])
        if not get_store().exists(state["key"]):  # deleted here on purpose: not brought back
            reason = "its session was deleted from the store; not re-imported"
            return FileOutcome(label, "unchanged", state["key"], reason)
        fmt = state["format"]
    else:
        head = _head_lines(fd, st.st_size)
        found = detect_lines(head)
        if found is None and fmt in CONVERTERS and head:
            found = fmt  # only bookkeeping so far: the format asked for is taken at its word
        if found is None:
            if not head:
                return FileOutcome(label, "unchanged", reason="no complete line yet")
            return FileOutcome(label, "bad", reason="format not recognised")
        if fmt == "auto" and found == "kirocrew":
            kiro.append(path)
            return FileOutcome(label, "delegated")
        if found not in CONVERTERS:
            return FileOutcome(label, "bad", reason=f"format {found} is not supported")
        if fmt != "auto" and found != fmt:
            return FileOutcome(label, "bad", reason=f"looks like {found}, not {fmt}")
        fmt = found
        sidechain = fmt == "claude-code" and path.name.startswith("agent-")
        conv = (
            claude_code.new_state(sidechain=sidechain)
            if fmt == "claude-code"
            else codex.new_state()
        )
        state = {
            "format": fmt,
            "dev": st.st_dev,
            "ino": st.st_ino,
            "offset": 0,
            "key": "",
            "conv": conv,
            "tally": {},
        }
    batch = _convert(fd, state["offset"], st.st_size, fmt, state["conv"])
    prov = state["conv"]["prov"]
    new = not state["key"]
    key = state["key"] or _key(fmt, path, prov, bool(state["conv"].get("sidechain")))
    warnings: list[str] = []
    if batch.foreign_at:
        warnings.append(
            f"the format changes at line {batch.foreign_at} of this run: those records are not {fmt}"
        )
    tally = Tally(state["tally"])
    tally.update(batch.tally)
    counts = dict(sorted(tally.items()))
    if dry_run or batch.offset == state["offset"]:
        status = "unchanged" if batch.offset == state["offset"] else "imported"
        return FileOutcome(label, status, key, anomalies=counts, warnings=tuple(warnings))
    other = get_store().read_metadata(key) if new else None
    if other is not None and other.get("source_path") != str(path.absolute()):
        return FileOutcome(
            label, "bad", key, f"{key} was already imported from {other.get('source_path')}"
        )
    meta = _metadata(key, fmt, path, prov, _title(batch.rows, prov), app)
    try:
        warnings += _write(key, batch, meta, new and other is None, new, app, announce)
    except (TranscriptError, DatabaseError) as exc:  # this file only; the run goes on
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return FileOutcome(label, "bad", key, f"not written: {first}")
    state.update(key=key, offset=batch.offset, tally=counts)
    target = _state_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, orjson.dumps(state), fsync=False)
    return FileOutcome(label, "imported", key, anomalies=counts, warnings=tuple(warnings))


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
    files = [f for source in paths for f in _walk(Path(source), result)]
    kiro: list[Path] = []
    for done, path in enumerate(files, 1):
        outcome = _import_file(path, fmt, app, dry_run, announce, kiro)
        if outcome.status != "delegated":
            result.outcomes.append(outcome)
            if progress is not None:
                progress(done, len(files), outcome)
    if kiro:
        result.outcomes += session_import_paths(paths=kiro, app=app, dry_run=dry_run).outcomes
    return result
