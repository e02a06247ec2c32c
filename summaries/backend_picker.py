"""Choosing the summary backend on the settings page: what is available (a selector that
never sends a prompt), one test request through the real backend, and storing the pick.

The pick lives in config.json (``summary_backend``, next to ``session_summary.enabled``)
and wins over ``KIROCREW_SUMMARY_MODEL``, which stays the default while nothing is picked.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .core.config import MAX_FIELD_CHARS, BackendChoice, write_choice
from .core.discovery import BackendOption, CheckResult, backend_check, discover_backends
from .runtime import backend_build

#: The agent CLIs the page looks for on PATH: (spec, the setting naming the program).
CLI_SPECS: tuple[tuple[str, str], ...] = (
    ("claude-cli", "KIROCREW_CLAUDE_CLI"),
    ("codex-cli", "KIROCREW_CODEX_CLI"),
)


class ChoiceRefused(ValueError):
    """What was posted is not a backend this page offers; the message says why."""


def backend_options() -> list[BackendOption]:
    """What the settings page offers (bounded, ~1.5 s at worst; sends no prompt)."""
    programs = {
        "KIROCREW_CLAUDE_CLI": settings.KIROCREW_CLAUDE_CLI,
        "KIROCREW_CODEX_CLI": settings.KIROCREW_CODEX_CLI,
    }
    return discover_backends(
        settings.KIROCREW_SUMMARY_MODEL,
        local_urls=settings.KIROCREW_LOCAL_MODEL_URLS,
        which=shutil.which,
        cli_commands=[(spec, _program(programs[name])) for spec, name in CLI_SPECS],
        anthropic_key_set=bool(settings.ANTHROPIC_API_KEY.strip()),
    )


def _program(command: str) -> str:
    words = command.split()
    return words[0] if words else command


def backend_choice_parse(form: Mapping[str, str]) -> BackendChoice:
    """The posted ``spec`` (plus ``model`` for a prefix that wants one typed in, and
    ``base_url`` for a local server) as a choice; refused unless the registry knows the
    spec and the address is one the page probes or the configured OpenAI one."""
    spec = (form.get("spec") or "").strip()
    model = (form.get("model") or "").strip()
    base_url = (form.get("base_url") or "").strip().rstrip("/")
    if spec.endswith(":"):
        if not model:
            raise ChoiceRefused(f"type the model name for {spec}<model>")
        spec += model
    if not spec or len(spec) > MAX_FIELD_CHARS or not spec.isprintable() or " " in spec:
        raise ChoiceRefused("pick one of the listed backends")
    if base_url:
        allowed = {u.rstrip("/") for u in settings.KIROCREW_LOCAL_MODEL_URLS}
        allowed.add(settings.KIROCREW_OPENAI_BASE_URL.strip().rstrip("/"))
        if not spec.startswith("openai:") or base_url not in allowed:
            raise ChoiceRefused("that server address is not one this page looks at")
    choice = BackendChoice(spec=spec, base_url=base_url)
    try:
        backend_build(choice)  # the registry's own check: known spec, settings complete
    except ImproperlyConfigured as exc:
        raise ChoiceRefused(str(exc)) from None
    return choice


def backend_test(choice: BackendChoice) -> CheckResult:
    """ONE short request through the real backend ``choice`` names (a tiny prompt, no
    conversation), with at most a minute's wait. ``choice`` comes from
    :func:`backend_choice_parse`, so it builds."""
    return backend_check(backend_build(choice, check=True))


def backend_choice_store(choice: BackendChoice | None) -> None:
    """Store the pick in config.json (None: forget it, back to KIROCREW_SUMMARY_MODEL).
    Raises ConfigWriteError / OSError when config.json cannot be written."""
    write_choice(Path(settings.KIROCREW_CONFIG_PATH), choice)
