"""Keep a ``Session`` row equal to its transcript on disk.

``session_sync`` folds the whole session (rewrites, import, repair); an append moves the
row forward from the appended rows (``mirror_after_append``). A landed write whose mirror
update fails (a full disk holds the SQLite database too) is remembered (``mirror_defer``)
and re-synced by the next write in this process, and in any process by the next append
to it (its row no longer matches the file's size).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Case, F, Q, Value, When
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from ..core.codec import generation
from ..core.errors import SessionNotFound
from ..core.fold import FoldReport
from ..core.keys import key_from_stem, safe_key
from ..core.provenance import AGENT_SOURCES, session_project, session_source
from ..core.store import Appended
from ..core.timestamps import newest_activity, newest_ts, source_ts, storable_ts
from ..core.user_turns import is_user_turn
from ..models import App, Session
from ..runtime import get_store

log = logging.getLogger(__name__)

# Anomalies an append changes (a torn tail becomes a terminated bad line): re-fold.
_TAIL_KINDS = ("torn_tail", "unterminated")

# Keys whose mirror missed a landed write in this process (bounded: the oldest forgotten
# waits for its next append or ``verify_transcripts --repair``).
_DEFERRED_MAX = 1024
_deferred: dict[str, None] = {}
_deferred_guard = threading.Lock()
# After a failed re-sync (the database still refuses) none is tried for this long: each try
# folds a whole session before its update fails, and the outage's writes must stay cheap.
RESYNC_BACKOFF_S = 2.0
RESYNC_BATCH = 16  # deferred keys re-synced per write: one write never pays for many
_resync_after = 0.0


@dataclass(frozen=True, slots=True)
class DiskState:
    """What the mirror records of one session, read from disk in one fold."""

    key: str
    metadata: dict[str, Any] | None
    sig: int
    gen: int
    size: int
    inode: int
    row_count: int
    user_turns: int
    last_activity: datetime | None
    anomaly_counts: dict[str, int]
    report: FoldReport | None = None  # the whole session's, with every anomaly's place

    def fields(self) -> dict[str, Any]:
        return {
            "safe_key": safe_key(self.key),
            **metadata_fields(self.metadata),
            "sig": self.sig,
            "gen": self.gen,
            "size": self.size,
            "row_count": self.row_count,
            "user_turns": self.user_turns,
            "last_activity": self.last_activity,
            "anomaly_counts": self.anomaly_counts,
            "file_mtime_ns": self.sig,
            "file_size": self.size,
            "file_inode": self.inode,
        }

    @property
    def created_at(self) -> datetime | None:
        return storable_ts((self.metadata or {}).get("created_at"))


def metadata_fields(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The mirrored fields that line 0 alone decides, without NUL: PostgreSQL text cannot
    hold it, and both profiles (and ``verify_transcripts``) must mirror a file the same."""
    meta = metadata or {}
    title, mode = meta.get("title"), meta.get("memory_mode")
    return {
        "title": title.replace("\x00", "") if isinstance(title, str) else "",
        "memory_mode": mode.replace("\x00", "")[:32] if isinstance(mode, str) else "",
        "closed": meta.get("closed") is True,
        "pinned": meta.get("pinned") is True,
        "source": session_source(meta),
        "project": session_project(meta),
    }


def disk_state(key: str) -> DiskState:
    """Stat and fold the whole session under its lock, so identity and counts agree."""
    store = get_store()
    with store.locked(key):
        try:
            st = os.stat(store.path(key))
        except FileNotFoundError:
            raise SessionNotFound(key) from None
        view = store.read_session(key)
    return DiskState(
        key=key,
        metadata=view.metadata,
        sig=st.st_mtime_ns,
        gen=generation(view.metadata),
        size=st.st_size,
        inode=st.st_ino,
        row_count=len(view.rows),
        user_turns=sum(1 for row in view.rows if is_user_turn(row)),
        last_activity=newest_activity(
            view.rows,
            (row.get("ts") for row in view.rows),
            agent=session_source(view.metadata) in AGENT_SOURCES,
        ),
        anomaly_counts=view.report.counts(),
        report=view.report,
    )


def key_for_file(path: Path, metadata: dict[str, Any] | None = None) -> str:
    """Line 0's own ``key`` when it names this file (and holds no NUL, which no database
    column can hold), else the stem's."""
    stem = path.name.removesuffix(".jsonl")
    claimed = (metadata or {}).get("key")
    if isinstance(claimed, str) and claimed and "\x00" not in claimed and safe_key(claimed) == stem:
        return claimed
    return key_from_stem(stem)


def session_sync(
    *,
    key: str,
    app: App | None = None,
    force: bool = False,
    state: DiskState | None = None,
    create: bool = True,
) -> Session:
    """Upsert the ``Session`` row of ``key`` from disk (full fold); ``SessionNotFound``.

    ``app`` owns a row this call creates. Without ``force`` a row that mirrors a newer
    state (higher ``gen``, or same ``gen`` and higher ``sig``: a concurrent append) is left
    alone. ``create=False`` only updates: a missing row means a delete won the race after
    the fold, and re-creating it would resurrect the session in the mirror.
    """
    state = state or disk_state(key)
    fields = state.fields()
    rows = Session.objects.filter(key=key)
    if not force:
        rows = rows.filter(Q(gen__lt=state.gen) | Q(gen=state.gen, sig__lte=state.sig))
    if rows.update(**fields, updated_at=timezone.now()):
        # .first(): a delete may land between the update and this read.
        updated = Session.objects.select_related("app").filter(key=key).first()
        if updated is None:
            raise SessionNotFound(key)
        return updated
    existing = Session.objects.select_related("app").filter(key=key).first()
    if existing is not None:
        return existing
    if not create:
        raise SessionNotFound(key)
    try:
        with transaction.atomic():
            return Session.objects.create(
                key=key, app=app, created_at=state.created_at or timezone.now(), **fields
            )
    except IntegrityError:
        if not Session.objects.filter(key=key).exists():
            raise
        # Created concurrently: bring that row up to date instead.
        return session_sync(key=key, app=app, force=force, state=state, create=create)


def mirror_after_append(key: str, appended: Appended, rows: list[dict[str, Any]]) -> None:
    """Move the row forward by the appended rows without re-reading the transcript, only
    when it mirrors the file just before this append (same ``gen``, the size it had, older
    ``sig``, no torn tail); otherwise a full sync. Without the size check a row that missed
    an append would move forward from the wrong base and drift for good."""
    ident = appended.identity
    changes: dict[str, Any] = {
        "sig": ident.sig,
        "size": ident.size,
        "file_mtime_ns": ident.sig,
        "file_size": ident.size,
        "updated_at": timezone.now(),
    }
    if rows:
        changes["row_count"] = F("row_count") + len(rows)
        users = sum(1 for row in rows if is_user_turn(row))
        if users:
            changes["user_turns"] = F("user_turns") + users
        # newest_activity's rule, by the session's own source column (this path reads
        # no line 0): an agent session moves by its records' source times only.
        by_source = newest_ts(map(source_ts, rows))
        by_ts = newest_ts(appended.ts)
        if by_source is not None or by_ts is not None:
            changes["last_activity"] = Case(
                When(source__in=AGENT_SOURCES, then=_later(by_source)), default=_later(by_ts)
            )
    updated = (
        Session.objects.filter(key=key, gen=ident.gen, size=appended.prior_size, sig__lt=ident.sig)
        .exclude(anomaly_counts__has_any_keys=_TAIL_KINDS)
        .update(**changes)
    )
    if not updated:
        session_sync(key=key, create=False)


def _later(moment: datetime | None) -> Any:
    """``last_activity`` moved forward to ``moment`` (kept when None)."""
    if moment is None:
        return F("last_activity")
    return Greatest(Coalesce(F("last_activity"), Value(moment)), Value(moment))


def mirror_after_metadata_edit(key: str) -> None:
    """A line-0 edit changes title/flags and the file's inode and size, never rows."""
    store = get_store()
    try:
        st = os.stat(store.path(key))
    except FileNotFoundError:
        return
    metadata = store.read_metadata(key)
    if metadata is None or not Session.objects.filter(key=key).exists():
        session_sync(key=key, create=False)
        return
    Session.objects.filter(key=key).update(
        **metadata_fields(metadata),
        size=st.st_size,
        file_size=st.st_size,
        file_inode=st.st_ino,
        updated_at=timezone.now(),
    )


def mirror_defer(key: str, exc: BaseException) -> None:
    log.warning("mirror of %s not updated (%s: %s); re-synced later", key, type(exc).__name__, exc)
    with _deferred_guard:
        _deferred.pop(key, None)
        _deferred[key] = None
        while len(_deferred) > _DEFERRED_MAX:
            _deferred.pop(next(iter(_deferred)))


def mirror_resync_deferred() -> int:
    """Re-sync up to ``RESYNC_BATCH`` deferred keys; how many were brought up to date. A key
    whose transcript is gone loses its rows (a delete whose row removal failed). Stops at
    the first database failure and tries again only ``RESYNC_BACKOFF_S`` later."""
    global _resync_after
    with _deferred_guard:
        if time.monotonic() < _resync_after:
            return 0
        keys = list(_deferred)[:RESYNC_BATCH]
    done = 0
    for key in keys:
        try:
            try:
                session_sync(key=key, create=False)
            except SessionNotFound:
                if not get_store().exists(key):
                    Session.objects.filter(key=key).delete()
        except DatabaseError:
            with _deferred_guard:
                _resync_after = time.monotonic() + RESYNC_BACKOFF_S
            return done
        with _deferred_guard:
            _deferred.pop(key, None)
        done += 1
    return done


def mirror_deferred() -> list[str]:
    with _deferred_guard:
        return list(_deferred)
