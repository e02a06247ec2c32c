"""The one dispatch of a summary pass, after the commit that asked for it, to the executor
``KIROCREW_SUMMARY_DISPATCH`` names: ``celery``, ``process`` (``worker.py``) or ``inline``
(in the caller: tests). No request thread runs a pass outside ``inline``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime
from enum import StrEnum
from functools import partial

from celery import shared_task
from django.conf import settings
from django.db import transaction

from transcripts.models import Slot

from .core.gate import switched_off
from .runtime import summary_config
from .selectors import summary_backlog
from .services import summary_generate
from .state import pass_request_drop, pass_requested
from .worker import summary_enqueue

log = logging.getLogger(__name__)


class DispatchMode(StrEnum):
    CELERY = "celery"
    PROCESS = "process"
    INLINE = "inline"


def dispatch_mode() -> DispatchMode:
    return DispatchMode(settings.KIROCREW_SUMMARY_DISPATCH)


@shared_task(name="summaries.summarize_slot", acks_late=True, ignore_result=True)
def summarize_slot(slot_name: str, force: bool = False, asked: str | None = None) -> str:
    """Idempotent: an unchanged transcript is a free cache hit, so a redelivery is safe.
    ``asked``: the request's stamp (ISO 8601), for a pass a later one may supersede."""
    stamp = datetime.fromisoformat(asked) if asked else None
    return summary_run(slot_name, force=force, asked=stamp)


def summary_run(slot_name: str, *, force: bool = False, asked: datetime | None = None) -> str:
    """One queued pass, wherever it runs; its outcome's label. Switched off, it ends before
    the pass, clearing only its "generating" flag (DEBUG only: the operator knows)."""
    refusal = switched_off(summary_config())
    if refusal is not None:
        log.debug("Session summary skipped for %s: %s", slot_name, refusal.label)
        pass_request_drop(slot_name)
        return refusal.label
    return summary_generate(slot_name=slot_name, force=force, asked=asked).label


def summary_dispatch(slot_name: str, *, force: bool = False, wait: bool = False) -> None:
    """Queue a pass once the current transaction commits. ``wait``: a command may wait for
    room in the embedded queue instead of dropping the pass."""
    mode = dispatch_mode()
    if mode is DispatchMode.INLINE:
        summary_run(slot_name, force=force)
        return
    transaction.on_commit(partial(_enqueue, mode, slot_name, force, wait))


def _enqueue(mode: DispatchMode, slot_name: str, force: bool, wait: bool) -> None:
    """A broker that is down or a database error is logged, never failing the request that
    committed nor the commit callbacks after this one."""
    try:
        if switched_off(summary_config()) is not None:
            return  # the pass would end at its first rule: queue nothing, flag nothing
        asked = pass_requested(slot_name)  # the GET says "generating" until this pass has run
        if mode is DispatchMode.CELERY:
            if force or asked is None:
                summarize_slot.delay(slot_name, force)  # a person asked: at once, never superseded
                return
            # A turn end's pass waits out the settle, and a later turn end of the slot within
            # it supersedes it: passes collapse per slot whatever the number of workers.
            summarize_slot.apply_async(
                (slot_name, False, asked.isoformat()), countdown=settings.KIROCREW_SUMMARY_SETTLE
            )
            return
        app_id = Slot.objects.filter(name=slot_name).values_list("app_id", flat=True).first()
        summary_enqueue(app_id, slot_name, force=force, wait=wait)
    except Exception:
        log.warning("Session summary dispatch failed for %s", slot_name, exc_info=True)


def summary_backlog_dispatch(*, wait: bool, only: Collection[str] | None = None) -> int:
    """Queue a pass for every slot of the backlog (``only``: of these alone); how many."""
    names = summary_backlog()
    if only is not None:
        names = [name for name in names if name in only]
    for name in names:
        summary_dispatch(name, wait=wait)
    return len(names)
