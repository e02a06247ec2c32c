"""The per-slot back-off after a runaway or unusable model reply.

Without it, a model that runs away on a session runs away again on every turn end, each
time to the token limit (minutes on a local server) for a reply that is thrown away. Kept
in Django's cache (Redis when configured, so every worker sees it; the process's memory
otherwise): it is advisory, and losing it costs one more attempt, nothing else.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache


def _key(slot_pk: int) -> str:
    return f"kirocrew:summary-backoff:{slot_pk}"


def summary_backoff_start(slot_pk: int) -> None:
    seconds = settings.KIROCREW_SUMMARY_BACKOFF
    if seconds > 0:
        cache.set(_key(slot_pk), 1, timeout=seconds)


def summary_backoff_active(slot_pk: int) -> bool:
    return cache.get(_key(slot_pk)) is not None


def summary_backoff_clear(slot_pk: int) -> None:
    cache.delete(_key(slot_pk))
