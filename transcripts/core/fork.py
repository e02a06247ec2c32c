"""Fork: a new session that starts as a copy of its parent's whole session, as of now.

The seed is materialized: the parent's folded rows are written into the child's own file,
so a fork never reads another file. Whoever later owns the parent's name (or a key with
the same file stem), and whatever happens to the parent (rewind, rotation, delete), the
fork reads the rows it was forked with and nothing else. Line 0 keeps where it came from
(``forked_from``, ``fork_parent_sig``, ``fork_parent_gen``, ``fork_seed_len``) as
provenance only; no reader follows it.
"""

from __future__ import annotations

import itertools
from typing import Any

from .chain import read_session
from .codec import RecordKind, encode_record
from .errors import SessionExists, TranscriptWriteError
from .fold import Folded, FoldReport
from .fsutil import atomic_write
from .rewrite import position_revisions, reencode, rotate_locked
from .storefiles import StoreFiles
from .timestamps import parse_ts, ts_sort_key, ts_strictly_after

# Line 0 keys a fork writes; the caller's metadata can never override them.
PROVENANCE = ("forked_from", "fork_parent_sig", "fork_parent_gen", "fork_seed_len")


def fork(
    store: StoreFiles, parent_key: str, child_key: str, metadata: dict[str, Any] | None = None
) -> int:
    """Create ``child_key`` holding the parent's rows; returns how many rows it copied.

    The parent is read under its lock (one consistent snapshot of archives + file and its
    identity), the child written under its own; the two locks are never held together, so
    two forks in opposite directions cannot deadlock. ``SessionNotFound`` for a missing
    parent, ``SessionExists`` when the child is already there (nothing is written then).
    """
    with store.locked(parent_key):
        view = read_session(store, parent_key)
        parent = store.identity(parent_key)
    provenance = {
        "forked_from": parent_key,
        "fork_parent_sig": parent.sig if parent else None,
        "fork_parent_gen": parent.gen if parent else None,
        "fork_seed_len": len(view.rows),
    }
    now = store.clock()
    head = {
        "_type": RecordKind.METADATA,
        "created_at": now.astimezone().isoformat(),
        "last_consolidated": 0,
    }
    extra = {k: v for k, v in (metadata or {}).items() if k not in PROVENANCE and k != "_type"}
    body = encode_record({**head, **extra, **provenance}, max_line=store.max_line)
    body += _seed_bytes(view.rows, now)
    with store.locked(child_key):
        _create_exclusive(store, child_key, body)
        if len(body) > store.max_bytes:
            rotate_locked(store, child_key)  # a big seed gets the size limit every append gets
    return len(view.rows)


def _seed_bytes(rows: list[dict[str, Any]], now: Any) -> bytes:
    """The rows as lines whose ``ts`` grow down the file, folding back to ``rows``.

    A parent whose rows were moved by position revisions folds to an order its ``ts`` do
    not follow. Written in that order, the child's next append would be stamped after the
    last line's ts and could repeat an earlier row's ts. So such rows are written in ts
    order and the folded order is re-expressed as position revisions, as rotation does.
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
    physical = [0] * len(rows)
    for position, index in enumerate(by_ts):
        physical[index] = position
    folded = Folded(None, rows, FoldReport(), order=physical)
    body = b"".join(lines[i] + b"\n" for i in by_ts)
    return body + position_revisions(folded, by_ts, now)


def _create_exclusive(store: StoreFiles, key: str, data: bytes) -> None:
    """Write the whole file under a temp name, then link it in: never over an existing file.

    A crash leaves either no child or the complete one, never a half-written seed; the
    link (unlike a rename) fails when any file of that name appeared, e.g. an import.
    """
    path = store.path(key)
    if path.exists():
        raise SessionExists(key)
    try:
        atomic_write(path, data, fsync=store.fsync.on_rewrite, exclusive=True)
    except FileExistsError:
        raise SessionExists(key) from None
    except OSError as exc:
        raise TranscriptWriteError(str(path), exc.errno, "fork failed") from exc
