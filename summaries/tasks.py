"""Celery entry points: thin wrappers over services (ids in, never model instances), and
the turn end's dispatch: Celery with a broker, the in-process worker without one."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from .core.gate import switched_off
from .runtime import summary_config
from .services import summary_generate

log = logging.getLogger(__name__)


@shared_task(name="summaries.summarize_slot", acks_late=True, ignore_result=True)
def summarize_slot(slot_name: str, force: bool = False) -> str:
    """Idempotent: an unchanged transcript is a free cache hit, so a redelivery is safe."""
    return summary_generate(slot_name=slot_name, force=force).label


def _run_pass(slot_name: str) -> None:
    """The in-process worker's pass. The gate's config-only rule comes first, as in
    ``should_summarize``: switched off, the pass ends there (logged as the pass logs it)
    before it opens a connection, so an import's 500 queued no-ops cost microseconds
    each, logged at DEBUG only. Switched on, ``summary_generate`` asks the whole gate in its fixed order."""
    refusal = switched_off(summary_config())
    if refusal is not None:
        # DEBUG: switched off, every turn end gets here (an import of 500 sessions would
        # print 500 lines of what the operator already knows).
        log.debug("Session summary skipped for %s: %s", slot_name, refusal.label)
        return
    summary_generate(slot_name=slot_name)


def summary_dispatch(slot_name: str) -> None:
    """Start the automatic pass of a turn end without waiting for it.

    A broker: queue the Celery task, as always. No broker (the embedded profile, where
    Celery is eager and ``.delay`` would run the pass inside the request): the bounded
    in-process worker runs it after the response. ``KIROCREW_SUMMARY_DISPATCH=inline``
    keeps the eager call, for code that must see the pass done when the call returns
    (tests that hold the whole test in one uncommitted transaction, which no other
    thread's connection can read).
    """
    if not summarize_slot.app.conf.task_always_eager or (
        settings.KIROCREW_SUMMARY_DISPATCH == "inline"
    ):
        summarize_slot.delay(slot_name)
        return
    from .worker import summary_submit

    summary_submit(slot_name, _run_pass)
