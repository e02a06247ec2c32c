"""Summarizer backends for the background model role (DESIGN §5.3), from one registry.

``KIROCREW_SUMMARY_MODEL`` names a backend: ``resolve_backend`` finds its entry in
:data:`BACKENDS` (an exact name such as ``"heuristic"``, or a prefix ending in ``:``
such as ``"openai:"``, followed by what that backend needs, e.g. a model name) and calls
its factory with the rest of the value and the settings object. Each factory reads its
own settings by name from that object (the OpenAI one: ``KIROCREW_OPENAI_*``), so the
caller passes nothing backend-specific and this package stays Django-free.

Adding a backend is one module and one line:

1. ``summaries/core/backends/<name>.py`` with a class meeting :class:`SummaryBackend`
   (``name`` and ``generate(prompt, turns) -> reply text``; raise a ``BackendError``
   subclass on failure) and a factory ``(rest: str, settings: object) -> backend`` that
   reads its settings (declare them in ``kirocrew_site/settings.py`` through
   ``kirocrew_site/env.py``'s typed readers);
2. ``register_backend("<prefix>:", factory)`` at the end of this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from summaries.core.backends.anthropic import AnthropicBackend, anthropic_backend
from summaries.core.backends.base import (
    BackendBadReply,
    BackendContextOverflow,
    BackendError,
    BackendHTTPError,
    BackendRunaway,
    BackendTimeout,
    BackendUnavailable,
    SummaryBackend,
)
from summaries.core.backends.claude_cli import ClaudeCliBackend, claude_cli_backend
from summaries.core.backends.codex_cli import CodexCliBackend, codex_cli_backend
from summaries.core.backends.openai import OpenAIBackend, openai_backend

__all__ = [
    "BACKENDS",
    "HEURISTIC",
    "AnthropicBackend",
    "BackendBadReply",
    "BackendContextOverflow",
    "BackendError",
    "BackendFactory",
    "BackendHTTPError",
    "BackendRunaway",
    "BackendTimeout",
    "BackendUnavailable",
    "ClaudeCliBackend",
    "CodexCliBackend",
    "OpenAIBackend",
    "SummaryBackend",
    "register_backend",
    "resolve_backend",
]

#: ``(rest of the spec after the prefix, the settings object) -> backend``; raises
#: ``ValueError`` naming the setting that is wrong. The settings are ``Any`` here: each
#: factory types what it reads (e.g. ``openai.OpenAISettings``).
BackendFactory = Callable[[str, Any], SummaryBackend]

#: The offline summarizer's name: its spec and the ``model`` its summaries record.
HEURISTIC = "heuristic"

#: Name or ``prefix:`` -> factory. Filled by :func:`register_backend` below.
BACKENDS: dict[str, BackendFactory] = {}


def register_backend(prefix: str, factory: BackendFactory) -> None:
    """File ``factory`` under ``prefix``: an exact name, or a prefix ending in ``:``."""
    if not prefix or prefix != prefix.strip():
        raise ValueError(f"a backend prefix is a non-empty word, got {prefix!r}")
    BACKENDS[prefix] = factory


def resolve_backend(
    spec: str, settings: Any, *, registry: Mapping[str, BackendFactory] | None = None
) -> SummaryBackend:
    """Build the backend named by ``spec`` (``KIROCREW_SUMMARY_MODEL``).

    Surrounding whitespace is ignored (values often come from env files); names and
    prefixes are case-sensitive, exactly as documented. An unknown spec raises
    ``ValueError``, as does a factory that finds its settings incomplete: a
    misconfigured background role must fail loudly rather than quietly use some other
    model, so there is no fallback of any kind.
    """
    table = BACKENDS if registry is None else registry
    cleaned = spec.strip()
    for prefix, factory in table.items():
        if cleaned == prefix and not prefix.endswith(":"):
            return factory("", settings)
        if prefix.endswith(":") and cleaned.startswith(prefix):
            return factory(cleaned.removeprefix(prefix), settings)
    shown = cleaned if len(cleaned) <= 80 else cleaned[:80] + "..."
    known = " or ".join(f"'{p}<...>'" if p.endswith(":") else f"'{p}'" for p in table)
    raise ValueError(f"unknown KIROCREW_SUMMARY_MODEL {shown!r}: expected {known}")


def heuristic_backend(rest: str, settings: Any) -> SummaryBackend:
    """The offline summarizer; it has no settings. Imported on first use (its lexicons)."""
    from summaries.core.heuristic import HeuristicBackend

    return HeuristicBackend()


# The registrations: one line per backend.
register_backend(HEURISTIC, heuristic_backend)
register_backend("openai:", openai_backend)
register_backend("anthropic:", anthropic_backend)
# The agent CLIs, with their own default model or a named one (claude-cli:sonnet).
register_backend("claude-cli", claude_cli_backend)
register_backend("claude-cli:", claude_cli_backend)
register_backend("codex-cli", codex_cli_backend)
register_backend("codex-cli:", codex_cli_backend)
