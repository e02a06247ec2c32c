"""Django bindings of the pure core: the effective config and the configured backend."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from django.conf import settings

from .core.backends import SummaryBackend, resolve_backend
from .core.config import ConfigCache, SessionSummaryConfig

_caches: dict[Path, ConfigCache] = {}
_caches_lock = threading.Lock()


def summary_config() -> SessionSummaryConfig:
    """The ``session_summary`` section of ``$KIROCREW_HOME/config.json`` + env overrides.

    Re-read when the file changes, so turning summaries on or off needs no restart.
    """
    path = Path(settings.KIROCREW_CONFIG_PATH)
    with _caches_lock:
        cache = _caches.get(path)
        if cache is None:
            cache = _caches[path] = ConfigCache(path)
    return cache.get(os.environ)


def _heuristic() -> SummaryBackend:
    from .core.heuristic import HeuristicBackend

    return HeuristicBackend()


def summary_backend() -> SummaryBackend:
    """The background model role. Never falls back to another model."""
    return resolve_backend(
        settings.KIROCREW_SUMMARY_MODEL,
        base_url=settings.KIROCREW_OPENAI_BASE_URL,
        api_key=settings.KIROCREW_OPENAI_API_KEY,
        timeout=settings.KIROCREW_OPENAI_TIMEOUT,
        max_tokens=settings.KIROCREW_OPENAI_MAX_TOKENS,
        heuristic_factory=_heuristic,
    )
