"""Housekeeping over the whole store: rotation and archive retention, mirror kept in step."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from django.conf import settings

from ..core.archive import RetentionDecision, archive_stem, cleanup_archives
from ..core.errors import SessionNotFound, TranscriptError
from ..core.fsutil import kind_of, regular_files
from ..core.keys import BARE_PREFIX
from ..core.reader import read_line0
from ..core.timestamps import now_local
from ..models import Session, Slot
from ..runtime import get_store
from .announce import announce_session_rewritten
from .sessions import session_rotate
from .sync import key_for_file, session_sync


def resolve_key(name: str) -> str:
    """A transcript key given as itself or as its slot's name."""
    if get_store().exists(name):
        return name
    slot = Slot.objects.select_related("session").filter(name=name).first()
    if slot is None:
        raise SessionNotFound(name)
    return slot.session.key


def session_rotate_all(
    *, keys: Sequence[str] = (), force: bool = False
) -> list[tuple[str, int | str]]:
    """Rotate the named transcripts (or every one over the size limit); (key, dropped | error).
    A non-regular entry (a link, a FIFO…) is never opened: it is reported as skipped."""
    store = get_store()
    done: list[tuple[str, int | str]] = []
    if keys:
        targets = []
        for key in map(resolve_key, keys):
            try:
                mode: int | None = os.lstat(store.path(key)).st_mode
            except FileNotFoundError:
                mode = None
            if mode is None or stat.S_ISREG(mode):
                targets.append(key)  # a missing file fails in the rotate itself
            else:
                done.append((key, f"skipped: not a regular file: {kind_of(mode)}"))
    else:
        paths, skipped = regular_files(store.root)
        done += [(entry.path.name, f"skipped: {entry.reason}") for entry in skipped]
        targets = [
            key_for_file(path, read_line0(path))
            for path in paths
            if force or path.stat().st_size > store.max_bytes
        ]
    for key in targets:
        try:
            done.append((key, session_rotate(key=key, force=force)))
        except (OSError, TranscriptError) as exc:
            done.append((key, f"failed: {exc}"))
    return done


def retention_days() -> int:
    return int(settings.KIROCREW_ARCHIVE_RETENTION_DAYS)


def archive_cleanup(*, days: int, dry_run: bool = False) -> list[RetentionDecision]:
    """Delete archives whose header ``archived_at`` is older than ``days``; re-sync their
    owners (rotation archives are part of their session: its counts change)."""
    decisions = cleanup_archives(get_store().archive_dir, days, now_local(), dry_run=dry_run)
    stems = {archive_stem(d.path.name) for d in decisions if d.expired}
    names = {stem for stem in stems if stem is not None}
    if dry_run or not stems:
        return decisions
    owners = Session.objects.filter(safe_key__in=names | {BARE_PREFIX + stem for stem in names})
    for key in owners.values_list("key", flat=True):
        try:
            session_sync(key=key)
        except SessionNotFound:
            continue
        announce_session_rewritten(key, "purge")  # rows chained from the purged archives are gone
    return decisions
