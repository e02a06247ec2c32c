"""Celery entry points: thin wrappers over services (ids in, never model instances)."""

from __future__ import annotations

from celery import shared_task

from .services import summary_generate


@shared_task(name="summaries.summarize_slot", acks_late=True, ignore_result=True)
def summarize_slot(slot_name: str, force: bool = False) -> str:
    """Idempotent: an unchanged transcript is a free cache hit, so a redelivery is safe."""
    return summary_generate(slot_name=slot_name, force=force).reason
