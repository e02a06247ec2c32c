"""The turn loop's state changes, and the one automatic summary dispatch site.

Turn state lives on the ``Slot`` row so every process sees it: ``running`` (set at turn
start, cleared at turn end), ``last_stop_reason`` (cleared at turn start, so a turn that
dies before its end leaves it empty: fail closed), and the dirty lease ``dirty_until`` (a
write for the slot is between "accepted" and "on disk and mirrored"; a pass neither
spends nor publishes across one, and it expires, so a killed writer cannot hold it).

A slot deleted after the route looked it up is ``Slot.DoesNotExist`` (or the store's
``SessionNotFound``): the API answers both with the 404 of a missing slot.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from django.db import transaction

from transcripts.core.store import Appended
from transcripts.models import Slot
from transcripts.services import session_append_revision, session_append_row

from .frames import RowData, RowFrame, TurnData, TurnFrame
from .marker import dirty_release, dirty_take
from .push import push_frame
from .runtime import summary_config

log = logging.getLogger(__name__)


def _push_after_commit(slot_name: str, frame: dict[str, Any]) -> None:
    transaction.on_commit(partial(push_frame, slot_name, frame))


def _push_row(slot: Slot, appended: Appended, role: str) -> None:
    for ts in appended.ts:
        _push_after_commit(
            slot.name, RowFrame(data=RowData(key=slot.name, ts=ts, role=role)).wire()
        )


class TurnRunning(Exception):
    """A turn is already running on this slot."""


@contextmanager
def _dirty(slot: Slot) -> Iterator[None]:
    token = dirty_take(slot.pk)
    try:
        yield
    finally:
        dirty_release(slot.pk, token)


def _gone(slot: Slot) -> Slot.DoesNotExist:
    return Slot.DoesNotExist(f"slot {slot.name} was deleted")


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
        with _dirty(slot):
            appended = session_append_row(key=slot.session.key, role="user", content=content)
    except BaseException:
        Slot.objects.filter(pk=slot.pk).update(running=False)
        raise
    _push_after_commit(slot.name, TurnFrame(data=TurnData(key=slot.name, running=True)).wire())
    _push_row(slot, appended, "user")
    return appended


def slot_append_row(
    *, slot: Slot, role: str, content: Any, meta: dict[str, Any] | None = None
) -> Appended:
    with _dirty(slot):
        appended = session_append_row(key=slot.session.key, role=role, content=content, meta=meta)
    _push_row(slot, appended, role)
    return appended


def slot_append_revision(*, slot: Slot, target_ts: str, patch: dict[str, Any]) -> Appended:
    with _dirty(slot):
        appended = session_append_revision(key=slot.session.key, target_ts=target_ts, patch=patch)
    _push_row(slot, appended, "revision")
    return appended


def _dispatch_summary(slot_name: str) -> None:
    """Queue the summary pass (no broker: on the in-process worker, see tasks.py). A
    broker that is down, or an inline pass failing before its own containment, is logged
    and never fails the turn end, nor stops the commit callbacks after this one."""
    from .tasks import summary_dispatch

    try:
        summary_dispatch(slot_name)
    except Exception:
        log.warning("Session summary dispatch failed for %s", slot_name, exc_info=True)


def slot_turn_end(*, slot: Slot, stop_reason: str) -> Slot:
    """End the turn; after commit, dispatch the summary pass (cheap gates run first)."""
    if not Slot.objects.filter(pk=slot.pk).update(running=False, last_stop_reason=stop_reason):
        raise _gone(slot)
    slot.refresh_from_db()
    _push_after_commit(
        slot.name,
        TurnFrame(data=TurnData(key=slot.name, running=False, stop_reason=stop_reason)).wire(),
    )
    if summary_config().enabled:
        transaction.on_commit(partial(_dispatch_summary, slot.name))
    else:
        log.debug("Session summary skipped for %s: disabled", slot.name)
    return slot
