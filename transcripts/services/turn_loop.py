"""The turn loop: start a turn, append rows, revise a row, end the turn.

Turn state lives on the ``Slot`` row so every process sees it: ``running``,
``last_stop_reason`` (cleared at turn start, so a turn that dies before its end leaves it
empty: fail closed) and the dirty lease (``dirty.py``). Each step is announced with
``transcripts.signals`` after commit; other apps act on those, so this module imports none.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError

from ..core.roles import Role
from ..core.store import Appended
from ..models import Slot
from ..signals import revision_appended, rows_appended, turn_ended, turn_started
from .announce import announce
from .dirty import slot_dirty
from .errors import TurnRunning
from .sessions import session_append_revision, session_append_row

log = logging.getLogger(__name__)


def _gone(slot: Slot) -> Slot.DoesNotExist:
    return Slot.DoesNotExist(f"slot {slot.name} was deleted")


def _announce_rows(slot: Slot, appended: Appended, role: str) -> None:
    stamps = list(appended.ts)
    announce(rows_appended, Slot, slot_name=slot.name, ts=stamps, roles=[role] * len(stamps))


def slot_turn_start(*, slot: Slot, content: str) -> Appended:
    """Start a turn with the person's message. Raises TurnRunning if one is running."""
    started = Slot.objects.filter(pk=slot.pk, running=False).update(
        running=True, last_stop_reason=""
    )
    if not started:
        if not Slot.objects.filter(pk=slot.pk).exists():
            raise _gone(slot)  # deleted since the lookup: not a running turn
        raise TurnRunning(slot.name)
    try:
        with slot_dirty(slot.pk):
            appended = session_append_row(key=slot.session.key, role=Role.USER, content=content)
    except BaseException:
        # Nothing was written: give the turn back. When the database refuses that too (the
        # error being raised is usually why), the slot stays running until a turn end.
        try:
            Slot.objects.filter(pk=slot.pk).update(running=False)
        except DatabaseError:
            log.warning("slot %s left running after a failed turn start", slot.name)
        raise
    announce(turn_started, Slot, slot_name=slot.name)
    _announce_rows(slot, appended, Role.USER)
    return appended


def slot_append_row(
    *, slot: Slot, role: str, content: Any, meta: dict[str, Any] | None = None
) -> Appended:
    with slot_dirty(slot.pk):
        appended = session_append_row(key=slot.session.key, role=role, content=content, meta=meta)
    _announce_rows(slot, appended, role)
    return appended


def slot_append_revision(*, slot: Slot, target_ts: str, patch: dict[str, Any]) -> Appended:
    """Change an earlier row by an appended revision; ``RowNotFound`` for an unknown ts."""
    with slot_dirty(slot.pk):
        appended = session_append_revision(key=slot.session.key, target_ts=target_ts, patch=patch)
    announce(revision_appended, Slot, slot_name=slot.name, ts=appended.ts[0], target_ts=target_ts)
    return appended


def slot_turn_end(*, slot: Slot, stop_reason: str) -> Slot:
    """End the turn (idle, stop reason recorded) and announce it after commit; receivers
    queue what they start (summaries' pass), so this never waits for it."""
    if not Slot.objects.filter(pk=slot.pk).update(running=False, last_stop_reason=stop_reason):
        raise _gone(slot)
    slot.refresh_from_db()
    announce(turn_ended, Slot, slot_name=slot.name, stop_reason=stop_reason)
    return slot
