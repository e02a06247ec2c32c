"""The dirty lease on a ``Slot`` row: a write for the slot is between "accepted" and "on
disk and mirrored" (readers read ``Slot.dirty``). Released by the writer that set it (its
token is the expiry it wrote), and expiring after ``KIROCREW_SLOT_DIRTY_TTL`` seconds, so
a writer killed mid-write cannot leave the slot dirty (every summary pass refused) forever.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from ..models import Slot

log = logging.getLogger(__name__)


def dirty_take(slot_id: int) -> datetime:
    """Mark the slot dirty until the returned token (the lease's expiry).

    Unconditional: writers overlap and the newest lease wins. When it ends before an older
    writer's the mark clears early: a pass may publish a summary that write makes stale a
    moment later, which the sidecar's sig shows and the next pass replaces.
    """
    until = timezone.now() + timedelta(seconds=settings.KIROCREW_SLOT_DIRTY_TTL)
    Slot.objects.filter(pk=slot_id).update(dirty_until=until)
    return until


def dirty_release(slot_id: int, token: datetime) -> None:
    """Clear the lease if it is still ours. Best effort: it runs after the write, whose
    outcome (rows on disk, or the write's own error) must reach the caller unchanged; a
    lease the database would not clear (a full disk) expires at its token instead."""
    try:
        Slot.objects.filter(pk=slot_id, dirty_until=token).update(dirty_until=None)
    except DatabaseError as exc:
        if transaction.get_connection().in_atomic_block:
            raise  # the caller's transaction is spoilt: theirs to settle
        log.warning("dirty lease of slot %s not released (%s); expires at %s", slot_id, exc, token)


@contextmanager
def slot_dirty(slot_id: int) -> Iterator[None]:
    """Hold the slot's dirty lease around one write."""
    token = dirty_take(slot_id)
    try:
        yield
    finally:
        dirty_release(slot_id, token)
