"""Django bindings of the pure core: the effective config and the configured backend."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .core.backends import SummaryBackend, resolve_backend
from .core.budget import input_budget
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


def summary_backend() -> SummaryBackend:
    """The background model role (``KIROCREW_SUMMARY_MODEL``); each backend reads its own
    settings. Never falls back to another model: a bad value is ImproperlyConfigured."""
    try:
        return resolve_backend(settings.KIROCREW_SUMMARY_MODEL, settings)
    except ValueError as exc:  # the message names the setting, never a key
        raise ImproperlyConfigured(str(exc)) from exc


#: The reply reserve of a backend that declares none (the CLI agents pick their own).
DEFAULT_REPLY_TOKENS = 2000


def summary_input_budget(backend: SummaryBackend) -> int:
    """Characters of transcript the prompt may carry for ``backend``:
    ``KIROCREW_SUMMARY_CONTEXT_TOKENS`` less the backend's reply reserve (its
    ``max_tokens`` when it has one)."""
    reply = getattr(backend, "max_tokens", None)
    reserve = reply if isinstance(reply, int) and reply > 0 else DEFAULT_REPLY_TOKENS
    return input_budget(settings.KIROCREW_SUMMARY_CONTEXT_TOKENS, reserve)
