"""Django bindings of the pure core: the effective config and the backend, configured or
picked on the settings page (stored in config.json, winning over ``KIROCREW_SUMMARY_MODEL``)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .core.backends import SummaryBackend, resolve_backend
from .core.config import (
    MAX_FIELD_CHARS,
    BackendChoice,
    ConfigCache,
    SessionSummaryConfig,
    read_choice,
    write_choice,
)
from .core.discovery import BackendOption, CheckResult, backend_check, discover_backends
from .core.prompt import input_budget
from .envconfig import summary_overrides_read

#: The longest a settings-page test request may wait for its answer (a CLI's own
#: timeout is minutes long; a person is watching this one).
CHECK_TIMEOUT = 60.0

_caches: dict[Path, ConfigCache] = {}
_caches_lock = threading.Lock()


def summary_config() -> SessionSummaryConfig:
    """config.json's ``session_summary`` + the environment's overrides; re-read when the
    file changes, so turning summaries on or off needs no restart."""
    path = Path(settings.KIROCREW_CONFIG_PATH)
    with _caches_lock:
        cache = _caches.get(path)
        if cache is None:
            cache = _caches[path] = ConfigCache(path)
    return cache.get(summary_overrides_read())


def summary_backend_choice() -> BackendChoice | None:
    """The backend staff picked on the settings page, if any."""
    return read_choice(Path(settings.KIROCREW_CONFIG_PATH))


def summary_backend() -> SummaryBackend:
    """The picked backend, else ``KIROCREW_SUMMARY_MODEL``; never falls back to another
    model: a bad value is ImproperlyConfigured."""
    return backend_build(summary_backend_choice() or BackendChoice(settings.KIROCREW_SUMMARY_MODEL))


def backend_build(choice: BackendChoice, *, check: bool = False) -> SummaryBackend:
    """``check``: with the short timeouts of a settings-page test request."""
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
            same = _url(choice.base_url) == _url(settings.KIROCREW_OPENAI_BASE_URL)
            overrides["KIROCREW_OPENAI_API_KEY"] = settings.KIROCREW_OPENAI_API_KEY if same else ""
        if check:
            for name, value in (
                ("KIROCREW_OPENAI_TIMEOUT", settings.KIROCREW_OPENAI_TIMEOUT),
                ("KIROCREW_ANTHROPIC_TIMEOUT", settings.KIROCREW_ANTHROPIC_TIMEOUT),
                ("KIROCREW_CLI_TIMEOUT", settings.KIROCREW_CLI_TIMEOUT),
            ):
                overrides[name] = min(float(value), CHECK_TIMEOUT)
        self._overrides = overrides

    def __getattr__(self, name: str) -> object:
        return self._overrides[name] if name in self._overrides else getattr(self._base, name)


def _url(url: str) -> str:
    return url.strip().rstrip("/")


#: The reply reserve of a backend that declares none (the CLI agents pick their own).
DEFAULT_REPLY_TOKENS = 2000


def summary_input_budget(backend: SummaryBackend) -> int:
    """Characters of transcript the prompt may carry: ``KIROCREW_SUMMARY_CONTEXT_TOKENS``
    less the backend's reply reserve (its ``max_tokens`` when it has one)."""
    reply = getattr(backend, "max_tokens", None)
    reserve = reply if isinstance(reply, int) and reply > 0 else DEFAULT_REPLY_TOKENS
    return input_budget(settings.KIROCREW_SUMMARY_CONTEXT_TOKENS, reserve)


class ChoiceRefused(ValueError):
    """What was posted is not a backend this page offers; the message says why."""


def backend_options() -> list[BackendOption]:
    """What the settings page offers (bounded, ~1.5 s at worst; sends no prompt)."""
    return discover_backends(
        settings.KIROCREW_SUMMARY_MODEL,
        local_urls=settings.KIROCREW_LOCAL_MODEL_URLS,
        which=shutil.which,
        cli_commands=[
            ("claude-cli", _program(settings.KIROCREW_CLAUDE_CLI)),
            ("codex-cli", _program(settings.KIROCREW_CODEX_CLI)),
        ],
        anthropic_key_set=bool(settings.ANTHROPIC_API_KEY.strip()),
    )


def _program(command: str) -> str:
    return (command.split() or [command])[0]


def backend_choice_parse(form: Mapping[str, str]) -> BackendChoice:
    """The posted ``spec`` (+ ``model`` for a prefix that wants one typed in, ``base_url``
    for a local server); refused unless the registry knows the spec and the address is one
    the page probes or the configured OpenAI one."""
    spec = (form.get("spec") or "").strip()
    model = (form.get("model") or "").strip()
    base_url = _url(form.get("base_url") or "")
    if spec.endswith(":"):
        if not model:
            raise ChoiceRefused(f"type the model name for {spec}<model>")
        spec += model
    if not spec or len(spec) > MAX_FIELD_CHARS or not spec.isprintable() or " " in spec:
        raise ChoiceRefused("pick one of the listed backends")
    if base_url:
        allowed = {u.rstrip("/") for u in settings.KIROCREW_LOCAL_MODEL_URLS}
        allowed.add(_url(settings.KIROCREW_OPENAI_BASE_URL))
        if not spec.startswith("openai:") or base_url not in allowed:
            raise ChoiceRefused("that server address is not one this page looks at")
    choice = BackendChoice(spec=spec, base_url=base_url)
    try:
        backend_build(choice)  # the registry's own check: known spec, settings complete
    except ImproperlyConfigured as exc:
        raise ChoiceRefused(str(exc)) from None
    return choice


def backend_test(choice: BackendChoice) -> CheckResult:
    """ONE short request (a tiny prompt), with at most a minute's wait."""
    return backend_check(backend_build(choice, check=True))


def backend_choice_store(choice: BackendChoice | None) -> None:
    """None: forget the pick. Raises ConfigWriteError / OSError."""
    write_choice(Path(settings.KIROCREW_CONFIG_PATH), choice)
