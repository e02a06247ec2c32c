"""The only writes besides appends: metadata edits, rewind, rotation, delete and fork.

Each rewrite replaces the file atomically under its lock, keeping its mtime (the session list
order and unrelated caches do not move); rotation and rewind advance ``gen``. Dropped rows are
archived first, and the archive taken back if the rewrite then fails, so no row shows twice
(docs/DESIGN.md, "Transcript store decisions").
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import locking
from .archive import ROTATE_REASON, is_unlanded, read_header, write_archive
from .codec import (
    MAX_LINE_BYTES,
    POSITION_HINT,
    ROW_CHANGES,
    TARGET,
    RecordKind,
    encode_record,
    generation,
    new_metadata,
    revision_record,
)
from .content import check_content
from .errors import (
    ArchiveError,
    RecordRejected,
    RowNotFound,
    SessionExists,
    SessionNotFound,
    TranscriptWriteError,
)
from .fold import Folded
from .fsutil import atomic_write, remove_stale_temps
from .reader import iter_lines, line_at, parse_json_line, parse_metadata_line
from .storefiles import StoreFiles
from .timestamps import monotonic_ts, parse_ts, ts_sort_key, ts_strictly_after

log = logging.getLogger(__name__)


def _replace(
    store: StoreFiles, key: str, data: bytes, before: os.stat_result, archive: Path | None = None
) -> None:
    """Replace the file, keeping its mtime. When that fails with the old file still in place,
    ``archive`` (rows all still in the file) is removed, or reads would show them twice."""
    path = store.path(key)
    try:
        remove_stale_temps(path.parent, path.name)
        atomic_write(path, data, fsync=store.fsync.on_rewrite, mtime_ns=before.st_mtime_ns)
    except OSError as exc:  # ENOSPC, EFBIG, EIO…: atomic_write removed its temp file
        if archive is not None:
            with contextlib.suppress(FileNotFoundError):
                now = path.stat()
                if (now.st_ino, now.st_dev) == (before.st_ino, before.st_dev):
                    archive.unlink(missing_ok=True)
        raise TranscriptWriteError(str(path), exc.errno, "rewrite failed") from exc


def update_metadata(store: StoreFiles, key: str, updates: dict[str, Any]) -> bool:
    """Merge ``updates`` into line 0 (mtime and gen unchanged). False, writing nothing, when
    the file is missing or line 0 is not metadata: never clobber a line it cannot read.
    """
    check_content(updates, what="metadata")
    with store.locked(key):
        path = store.path(key)
        try:
            st = path.stat()
            data = path.read_bytes()
        except FileNotFoundError:
            return False
        first, _, rest = data.partition(b"\n")
        metadata = parse_metadata_line(first)
        if metadata is None:
            log.warning("metadata edit skipped for %s: line 0 is not metadata", key)
            return False
        merged = {**metadata, **updates}
        _replace(store, key, encode_record(merged, max_line=store.max_line) + rest, st)
        return True


def rewind(store: StoreFiles, key: str, after_ts: str) -> int:
    """Drop every row after the row stamped ``after_ts`` into an archive; gen + 1. Revisions
    after the cut of kept rows stay (later than every kept row, so ts order holds); those of
    dropped rows and unreadable lines are archived. Returns the number of dropped rows.
    """
    with store.locked(key):
        path = store.path(key)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise SessionNotFound(key) from None
        with path.open("rb") as fp:
            # No line limit: a line too long for the fold is still someone's bytes, and
            # the kept or archived copy must be that line, not an empty one.
            lines = [
                (line.data or b"", _classify(line.data))
                for line in iter_lines(fp, max_line=sys.maxsize)
            ]
        cut = max(
            (i for i, (_, (kind, ts)) in enumerate(lines) if kind == "row" and ts == after_ts),
            default=-1,
        )
        if cut < 0:
            raise RowNotFound(after_ts)
        metadata = parse_metadata_line(lines[0][0])
        kept = [raw for raw, _ in lines[1 if metadata is not None else 0 : cut + 1]]
        dropped: list[bytes] = []
        dropped_ts: set[str] = set()
        rows_dropped = 0
        for raw, (kind, name) in lines[cut + 1 :]:
            if kind == "change" and name not in dropped_ts:
                kept.append(raw)
                continue
            dropped.append(raw)
            if kind == "row":
                rows_dropped += 1
                if name:
                    dropped_ts.add(name)
        if not dropped:
            return 0
        metadata = dict(metadata or {"_type": RecordKind.METADATA})
        metadata["rotation_generation"] = generation(metadata) + 1
        archive = _archive_or_fail(store, key, dropped, "rewind", metadata["rotation_generation"])
        body = reencode(metadata) + b"".join(raw + b"\n" for raw in kept)
        _replace(store, key, body, st, archive)
        return rows_dropped


def _classify(data: bytes | None) -> tuple[str, str | None]:
    """("row", its ts), ("change", its target_ts) or ("other", None) for one raw line."""
    value, bad = parse_json_line(data) if data else (None, "blank")
    if bad or not isinstance(value, dict):
        return "other", None
    kind = value.get("_type")
    name = value.get("ts") if kind is None else value.get(TARGET)
    name = name if isinstance(name, str) else None
    if kind is None:
        return "row", name
    changes = isinstance(kind, str) and kind in ROW_CHANGES  # a list or object won't hash
    return ("change", name) if changes else ("other", None)


def _archive_or_fail(
    store: StoreFiles, key: str, lines: list[bytes], reason: str, generation: int
) -> Path:
    # Under the lock, an archive a crashed rewrite left for a generation the file never
    # reached holds rows all still in the file; left in place it would turn "valid" once a
    # later rewrite reaches the same generation number.
    for path in store.archive_paths(key):
        if is_unlanded(read_header(path), generation - 1):
            log.warning("removing unlanded archive %s of %s", path.name, key)
            path.unlink(missing_ok=True)
    try:
        return write_archive(
            store.archive_dir,
            store.path(key).stem,
            lines,
            reason,
            now=store.clock(),
            fsync=store.fsync.on_rewrite,
            generation=generation,
        )
    except OSError as exc:
        raise ArchiveError(f"could not archive {len(lines)} lines of {key}: {exc}") from exc


def reencode(record: dict[str, Any]) -> bytes:
    """``encode_record``, but a record the original's stdlib writer left on disk (a lone
    surrogate escape, which orjson refuses) is re-encoded its way instead of failing."""
    try:
        return encode_record(record)
    except RecordRejected as refused:
        try:
            line = json.dumps(record, separators=(",", ":"), allow_nan=False).encode() + b"\n"
        except (TypeError, ValueError):
            raise refused from None
        if len(line) > MAX_LINE_BYTES:
            raise refused from None
        return line


def rotate(store: StoreFiles, key: str, *, force: bool = False) -> int:
    with store.locked(key):
        return rotate_locked(store, key, force=force)


def rotate_locked(store: StoreFiles, key: str, *, force: bool = False) -> int:
    """The original's ``_maybe_rotate``: past ``max_bytes`` keep at most ``keep_lines`` newest
    rows that fit, archive the rest, fold revisions into their rows (``force``: even under the
    limit). Returns the rows dropped; fails closed (0, logged) when archiving or the rewrite
    fails, since it runs after an append that already succeeded.
    """
    path = store.path(key)
    try:
        st = path.stat()
    except FileNotFoundError:
        return 0
    if st.st_size <= store.max_bytes and not force:
        return 0
    folded = store.read_file(key, keep_raw=True)
    refused = _refusal(folded, force=force)
    if refused or folded.metadata is None:  # (no line 0 is a refusal; said for the types)
        log.warning("rotation skipped for %s: %s", key, refused)
        return 0
    oversize = _oversize(folded)
    physical = folded.order or list(range(len(folded.rows)))
    by_physical = sorted(range(len(folded.rows)), key=lambda i: physical[i])
    # A row keeps its original bytes unless a revision changed it (raw: read with keep_raw).
    raw, patched = folded.raw or [], folded.patched
    lines = [reencode(folded.rows[i])[:-1] if i in patched else raw[i] for i in by_physical]
    metadata = dict(folded.metadata)
    now = store.clock()
    metadata.update(last_consolidated=0, rotated_at=now.isoformat())
    metadata["rotation_generation"] = generation(metadata) + 1
    head = reencode(metadata)
    n = len(lines)
    keep = max(min(store.keep_lines, n), 1) if n else 0
    while keep > 1 and len(head) + sum(len(x) + 1 for x in lines[n - keep :]) > store.max_bytes:
        keep -= 1
    if keep >= n and not force and not folded.report.revisions and not folded.bad_lines:
        # Nothing to drop and nothing to fold: a single unsplittable row. (With revisions,
        # folding them is itself the rewrite that brings the file back under the limit,
        # instead of re-reading an over-limit file on every append.)
        return 0
    with path.open("rb") as fp:  # oversize lines go to the archive unread by the fold
        oversize_lines = [line_at(fp.fileno(), offset) for offset in oversize]
    dropped = lines[: n - keep] + folded.bad_lines + oversize_lines
    try:
        gen = metadata["rotation_generation"]
        archive = _archive_or_fail(store, key, dropped, ROTATE_REASON, gen) if dropped else None
        body = head + b"".join(x + b"\n" for x in lines[n - keep :])
        body += position_revisions(folded.rows, by_physical[n - keep :], now)
        _replace(store, key, body, st, archive)
    except (ArchiveError, TranscriptWriteError):
        log.exception("rotation of %s failed closed", key)
        return 0
    return n - keep


def rotation_blocker(store: StoreFiles, key: str) -> str | None:
    """Why this transcript is over the size limit and appends cannot rotate it, or None.
    Reads the whole file: for ``verify_transcripts`` and the admin, never an append."""
    try:
        if store.path(key).stat().st_size <= store.max_bytes:
            return None
        folded = store.read_file(key)
    except FileNotFoundError:
        return None
    return _refusal(folded, force=False) or "over the size limit; a forced rotation rewrites it"


def _oversize(folded: Folded) -> list[int]:
    return [a.offset for a in folded.report.anomalies if a.kind == "oversize"]


def _refusal(folded: Folded, *, force: bool) -> str:
    """Why ``rotate_locked`` leaves this file as it is ("" when it rotates): THE rule, which
    ``rotation_blocker`` reports. A forced rotation (the admin's, the repair of
    ``cannot_rotate``) archives oversize lines; nothing rotates a file without line 0."""
    if folded.metadata is None:
        return "no metadata line (line 0)"
    oversize = _oversize(folded)
    if oversize and not force:
        return (
            f"{len(oversize)} oversize line(s), first at byte {oversize[0]}; "
            "a forced rotation moves them into the archive"
        )
    return ""


def position_revisions(rows: list[dict[str, Any]], kept: list[int], now: Any) -> bytes:
    """Re-express the folded order of the ``kept`` rows (their indexes in ``rows``, in the
    order they are written) as position revisions, if it differs."""
    wanted = sorted(kept)  # kept rows in folded order
    if wanted == kept:
        return b""
    out: list[bytes] = []
    previous = str(rows[kept[-1]].get("ts"))
    first_diff = next(i for i, (a, b) in enumerate(zip(wanted, kept, strict=True)) if a != b)
    for pos in range(first_diff, len(wanted)):
        anchor = "" if pos == 0 else str(rows[wanted[pos - 1]].get("ts"))
        previous = monotonic_ts(previous, now)
        target = rows[wanted[pos]].get("ts")  # written as the row bears it
        out.append(encode_record(revision_record(target, {POSITION_HINT: anchor}, previous)))
    return b"".join(out)


# Files derived from a session that their owner keeps next to the transcripts (a summary's
# sidecars): the store knows no layout, only who to ask. An owner registers how to find its
# files for a key (e.g. in an ``AppConfig.ready()``) and a delete reaps them, so none
# outlives its transcript. Rewind and rotation leave them: an owner records the identity
# (sig + gen) its file was made for and judges staleness itself.
# (sessions root, session key) -> the owner's files for that session (existing or not).
DerivedPaths = Callable[[Path, str], Iterable[Path]]

_OWNERS: dict[str, DerivedPaths] = {}


def register_derived(name: str, paths_for_key: DerivedPaths) -> None:
    """Register (or replace: registering twice is harmless) the owner ``name``."""
    _OWNERS[name] = paths_for_key


def derived_paths(root: Path, key: str) -> list[Path]:
    return [path for paths_for_key in _OWNERS.values() for path in paths_for_key(root, key)]


def delete(store: StoreFiles, key: str) -> bool:
    """Remove the transcript, its archives and derived files (``register_derived``), and the
    ``.lock`` file when this lock is released (``locking.remove_when_released``: a waiting
    writer starts over on a new file, so the removal never lets two writers in).
    """
    with store.locked(key):
        locking.remove_when_released(str(store.lock_path(key)))
        path = store.path(key)
        existed = path.is_file()
        for target in [path, *store.archive_paths(key), *derived_paths(store.root, key)]:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        remove_stale_temps(path.parent, path.name)
        return existed


# Line 0 keys a fork writes; the caller's metadata can never override them.
PROVENANCE = ("forked_from", "fork_parent_sig", "fork_parent_gen", "fork_seed_len")


def fork(
    store: StoreFiles, parent_key: str, child_key: str, metadata: dict[str, Any] | None = None
) -> int:
    """Create ``child_key`` holding the parent's rows; returns how many it copied. The two
    locks are never held together, so two forks in opposite directions cannot deadlock.
    """
    with store.locked(parent_key):
        view = store.read_session(parent_key)
        parent = store.identity(parent_key)
    provenance = {
        "forked_from": parent_key,
        "fork_parent_sig": parent.sig if parent else None,
        "fork_parent_gen": parent.gen if parent else None,
        "fork_seed_len": len(view.rows),
    }
    now = store.clock()
    extra = {k: v for k, v in (metadata or {}).items() if k not in PROVENANCE and k != "_type"}
    body = encode_record(new_metadata(now, {**extra, **provenance}), max_line=store.max_line)
    body += _seed_bytes(view.rows, now)
    path = store.path(child_key)
    with store.locked(child_key):
        if path.exists():
            raise SessionExists(child_key)
        # Complete under a temp name, then linked in: a crash leaves no child or the whole
        # one, and the link (unlike a rename) fails when a file of that name appeared.
        try:
            atomic_write(path, body, fsync=store.fsync.on_rewrite, exclusive=True)
        except FileExistsError:
            raise SessionExists(child_key) from None
        except OSError as exc:
            raise TranscriptWriteError(str(path), exc.errno, "fork failed") from exc
        if len(body) > store.max_bytes:
            rotate_locked(store, child_key)  # a big seed gets the size limit every append gets
    return len(view.rows)


def _seed_bytes(rows: list[dict[str, Any]], now: Any) -> bytes:
    """The rows as lines whose ``ts`` grow down the file, folding back to ``rows``. A parent
    whose rows position revisions moved folds to an order its ``ts`` do not follow; written
    so, the child's next append could repeat an earlier row's ts. Such rows are written in
    ts order with the folded order as position revisions, as rotation does.
    """
    lines = [reencode(row)[:-1] for row in rows]
    stamps = [row.get("ts") for row in rows]
    usable = [ts for ts in stamps if isinstance(ts, str) and parse_ts(ts) is not None]
    if len(set(usable)) < len(rows) or all(
        ts_strictly_after(b, a) for a, b in itertools.pairwise(usable)
    ):
        # In order already; or legacy rows without a usable, unique ts, which a position
        # revision could not target: kept as folded.
        return b"".join(line + b"\n" for line in lines)
    by_ts = sorted(range(len(rows)), key=lambda i: ts_sort_key(stamps[i]))
    body = b"".join(lines[i] + b"\n" for i in by_ts)
    return body + position_revisions(rows, by_ts, now)
