"""Transcript writes: the store, then the ``Session`` row.

A write is acknowledged if and only if it is on disk: a mirror update failing after it is
deferred (``sync.mirror_defer``), since a retry would append the rows twice. A create is
the exception: its file is removed again when its rows cannot be, so no orphan holds the name.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction

from ..core.errors import SessionExists, SessionNotFound
from ..core.keys import is_valid_slot_name, slot_name_for_key, transcript_key_for_slot
from ..core.store import Appended
from ..models import App, Session, Slot
from ..runtime import get_store
from .announce import announce_session_deleted, announce_session_rewritten
from .errors import InvalidSlotName, SlotExists, TurnRunning
from .sync import (
    mirror_after_append,
    mirror_after_metadata_edit,
    mirror_defer,
    mirror_deferred,
    mirror_resync_deferred,
    session_sync,
)

log = logging.getLogger(__name__)


def _before_write() -> None:
    """Catch up the mirror of writes that landed while the database could not take them."""
    if mirror_deferred() and not transaction.get_connection().in_atomic_block:
        mirror_resync_deferred()


MIRROR_ATTEMPTS = 3


def _mirror_landed(key: str, update: Callable[[], object]) -> None:
    """Run the mirror update of a write already on disk. Inside a caller's transaction
    (the agent importer's) an error propagates: swallowed, it would spoil that transaction."""
    if transaction.get_connection().in_atomic_block:
        update()
        return
    for attempt in range(MIRROR_ATTEMPTS):
        try:
            update()
            return
        except IntegrityError as exc:
            # A row another app's index (search) added for this session while the delete
            # collected what to cascade: the next attempt collects it too.
            if attempt + 1 == MIRROR_ATTEMPTS:
                mirror_defer(key, exc)
        except DatabaseError as exc:
            mirror_defer(key, exc)
            return


def _new_slot(
    name: str, title: str, memory_mode: str, app: App | None, write: Callable[..., object]
) -> Slot:
    """Claim ``name``, ``write(key, line 0)`` its new transcript, and mirror it; when the
    rows cannot be created the file goes too."""
    _before_write()
    if not is_valid_slot_name(name):
        raise InvalidSlotName(f"invalid slot name {name!r}")
    key = transcript_key_for_slot(name)
    if Slot.objects.filter(name=name).exists() or Session.objects.filter(key=key).exists():
        raise SlotExists(name)
    metadata: dict[str, Any] = {"key": key}
    if title:
        metadata["title"] = title
    if memory_mode:
        metadata["memory_mode"] = memory_mode
    if app is not None:
        metadata["app"] = app.name  # so the owner survives a rebuild of the mirror from disk
    try:
        write(key, metadata)
    except SessionExists:
        raise SlotExists(name) from None
    try:
        with transaction.atomic():
            session = session_sync(key=key, app=app, force=True)
            return Slot.objects.create(name=name, session=session, app=app)
    except IntegrityError:
        raise  # another writer mirrored this file meanwhile: it is theirs, keep it
    except DatabaseError:
        # Nothing references the new file yet (no slot, no session row): remove it, so the
        # name is free again rather than answering 409 to a create and 404 to a read.
        try:
            get_store().delete(key)
        except Exception:
            log.exception("could not remove the transcript of failed create %s", key)
        raise


def session_create(*, name: str, title: str = "", memory_mode: str = "", app: App | None) -> Slot:
    """A new transcript (line 0 only), its ``Session`` row and its ``Slot``."""
    return _new_slot(name, title, memory_mode, app, get_store().create)


def session_append_row(
    *,
    key: str,
    role: str,
    content: Any,
    meta: dict[str, Any] | None = None,
) -> Appended:
    """Append one row (redacted unless a user row); the new ts is ``result.ts[0]``."""
    row: dict[str, Any] = {"role": role, "content": content}
    if meta is not None:
        row["meta"] = meta
    return session_append_rows(key=key, rows=[row])


def session_append_rows(*, key: str, rows: list[dict[str, Any]]) -> Appended:
    """Append rows in one write; refuses (``SessionNotFound``) when the transcript is missing."""
    _before_write()
    appended = get_store().append_rows(key, rows, create=False)
    _mirror_landed(key, lambda: mirror_after_append(key, appended, rows))
    return appended


def session_append_revision(*, key: str, target_ts: str, patch: dict[str, Any]) -> Appended:
    """Change an earlier row by an appended revision; ``RowNotFound`` for an unknown ts."""
    _before_write()
    appended = get_store().append_revision(key, target_ts, patch)
    _mirror_landed(key, lambda: mirror_after_append(key, appended, []))
    return appended


def session_update_metadata(*, key: str, updates: dict[str, Any]) -> bool:
    """Merge ``updates`` into line 0 (mtime and gen unchanged); False when nothing was written."""
    _before_write()
    written = get_store().update_metadata(key, updates)
    if written:
        _mirror_landed(key, lambda: mirror_after_metadata_edit(key))
    return written


def session_set_title(*, key: str, title: str) -> bool:
    return session_update_metadata(key=key, updates={"title": title})


def session_rewind(*, key: str, after_ts: str) -> int:
    """Drop (and archive) every row after ``after_ts``; gen + 1; returns rows dropped.
    ``TurnRunning`` while a turn runs: its next write would land after a cut it never saw."""
    if Slot.objects.filter(session__key=key, running=True).exists():
        raise TurnRunning(slot_name_for_key(key))
    _before_write()
    dropped = get_store().rewind(key, after_ts)
    _mirror_landed(key, lambda: session_sync(key=key, create=False))
    announce_session_rewritten(key, "rewind")
    return dropped


def session_rotate(*, key: str, force: bool = False) -> int:
    """Rotate when over the limits (or ``force``); re-sync when the file changed."""
    store = get_store()
    before = store.identity(key)
    dropped = store.rotate(key, force=force)
    after = store.identity(key)
    if after is not None and after != before:
        # Deleted meanwhile, or a file the mirror never had (import adopts those).
        with contextlib.suppress(SessionNotFound):
            _mirror_landed(key, lambda: session_sync(key=key, create=False))
        announce_session_rewritten(key, "rotate")
    return dropped


def session_fork(*, key: str, name: str | None = None) -> Slot:
    """A child holding a copy of the parent's rows, taken now; same owner as the parent.
    The caller has checked that its app may read the parent."""
    parent = Session.objects.select_related("app").filter(key=key).first()
    if parent is None:
        raise SessionNotFound(key)
    if name is None:
        base = slot_name_for_key(key)[:100]
        name = f"{base}-fork-{secrets.token_hex(3)}"
    fork = partial(get_store().fork, key)
    return _new_slot(name, parent.title, parent.memory_mode, parent.app, fork)


def session_delete(*, key: str) -> bool:
    """Permanent: transcript, sidecars, archives, its ``.lock`` and mirror rows go.

    Files first, rows second: a crash in between leaves a slot whose transcript is gone
    (404 ``slot_not_found``), never an orphan file an import would adopt again.
    """
    _before_write()
    existed = get_store().delete(key)
    # The slot goes with it; deferred (removed by the re-sync) when the database refuses.
    _mirror_landed(key, lambda: Session.objects.filter(key=key).delete())
    announce_session_deleted(key)
    return existed
