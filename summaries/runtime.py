"""Django bindings of the pure core: the effective config and the configured backend."""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .core.backends import SummaryBackend, resolve_backend
from .core.config import BackendChoice, ConfigCache, SessionSummaryConfig, read_choice
from .core.prompt import input_budget
from .envconfig import summary_overrides_read

#: The longest a settings-page test request may wait for its answer (a CLI's own
#: timeout is minutes long; a person is watching this one).
CHECK_TIMEOUT = 60.0

_caches: dict[Path, ConfigCache] = {}
_caches_lock = threading.Lock()


def summary_config() -> SessionSummaryConfig:
    """The ``session_summary`` section of ``$KIROCREW_HOME/config.json`` + the
    environment's overrides (strict: settings.py has refused a bad one at start-up).

    Re-read when the file changes, so turning summaries on or off needs no restart.
    """
    path = Path(settings.KIROCREW_CONFIG_PATH)
    with _caches_lock:
        cache = _caches.get(path)
        if cache is None:
            cache = _caches[path] = ConfigCache(path)
    return cache.get(summary_overrides_read())


def summary_backend_choice() -> BackendChoice | None:
    """The backend staff picked on the settings page (config.json), if any."""
    return read_choice(Path(settings.KIROCREW_CONFIG_PATH))


def summary_backend() -> SummaryBackend:
    """The background model role: the backend picked on the settings page, else
    ``KIROCREW_SUMMARY_MODEL``; each backend reads its own settings. Never falls back to
    another model: a bad value is ImproperlyConfigured."""
    choice = summary_backend_choice()
    if choice is None:
        return backend_build(BackendChoice(settings.KIROCREW_SUMMARY_MODEL))
    return backend_build(choice)


def backend_build(choice: BackendChoice, *, check: bool = False) -> SummaryBackend:
    """The backend ``choice`` names, built by its registry factory. ``check``: with the
    short timeouts of a settings-page test request."""
    try:
        return resolve_backend(choice.spec, _ChoiceSettings(choice, check=check))
    except ValueError as exc:  # the message names the setting, never a key
        raise ImproperlyConfigured(str(exc)) from exc


class _ChoiceSettings:
    """django.conf.settings as a backend built for ``choice`` reads them: a local server's
    address in place of ``KIROCREW_OPENAI_BASE_URL``, with the OpenAI key only when that
    address IS the configured one (a server found on loopback never receives the key)."""

    def __init__(self, choice: BackendChoice, *, check: bool) -> None:
        self._base = settings
        overrides: dict[str, object] = {}
        if choice.base_url:
            overrides["KIROCREW_OPENAI_BASE_URL"] = choice.base_url
            if _same_url(choice.base_url, settings.KIROCREW_OPENAI_BASE_URL):
                overrides["KIROCREW_OPENAI_API_KEY"] = settings.KIROCREW_OPENAI_API_KEY
            else:
                overrides["KIROCREW_OPENAI_API_KEY"] = ""
        if check:
            for name, value in (
                ("KIROCREW_OPENAI_TIMEOUT", settings.KIROCREW_OPENAI_TIMEOUT),
                ("KIROCREW_ANTHROPIC_TIMEOUT", settings.KIROCREW_ANTHROPIC_TIMEOUT),
                ("KIROCREW_CLI_TIMEOUT", settings.KIROCREW_CLI_TIMEOUT),
            ):
                overrides[name] = min(float(value), CHECK_TIMEOUT)
        self._overrides = overrides

    def __getattr__(self, name: str) -> object:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(self._base, name)


def _same_url(a: str, b: str) -> bool:
    return a.strip().rstrip("/") == b.strip().rstrip("/")


#: The reply reserve of a backend that declares none (the CLI agents pick their own).
DEFAULT_REPLY_TOKENS = 2000


def summary_input_budget(backend: SummaryBackend) -> int:
    """Characters of transcript the prompt may carry for ``backend``:
    ``KIROCREW_SUMMARY_CONTEXT_TOKENS`` less the backend's reply reserve (its
    ``max_tokens`` when it has one)."""
    reply = getattr(backend, "max_tokens", None)
    reserve = reply if isinstance(reply, int) and reply > 0 else DEFAULT_REPLY_TOKENS
    return input_budget(settings.KIROCREW_SUMMARY_CONTEXT_TOKENS, reserve)
