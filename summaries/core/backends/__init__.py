"""Summarizer backends (DESIGN §5.3): ``KIROCREW_SUMMARY_MODEL`` is an exact name or a
``prefix:`` plus what that backend needs. Each factory reads its own settings by name
from the object it is passed, so this package stays Django-free."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from summaries.core.backends.anthropic import anthropic_backend
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
from summaries.core.backends.cli import (
    ClaudeCliBackend,
    CodexCliBackend,
    claude_cli_backend,
    codex_cli_backend,
)
from summaries.core.backends.openai import OpenAIBackend, openai_backend

__all__ = [
    "BACKENDS",
    "HEURISTIC",
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

#: ``(rest of the spec after the prefix, settings) -> backend``; raises ``ValueError``
#: naming the setting that is wrong. Each factory types the settings it reads.
BackendFactory = Callable[[str, Any], SummaryBackend]

HEURISTIC = "heuristic"  # the offline summarizer's spec and the model its summaries record

BACKENDS: dict[str, BackendFactory] = {}


def register_backend(prefix: str, factory: BackendFactory) -> None:
    """File ``factory`` under ``prefix``: an exact name, or a prefix ending in ``:``."""
    if not prefix or prefix != prefix.strip():
        raise ValueError(f"a backend prefix is a non-empty word, got {prefix!r}")
    BACKENDS[prefix] = factory


def resolve_backend(
    spec: str, settings: Any, *, registry: Mapping[str, BackendFactory] | None = None
) -> SummaryBackend:
    """The backend named by ``spec``, stripped (env files), case-sensitive. An unknown
    spec or incomplete settings raise ``ValueError``: a misconfigured background role
    fails loudly rather than quietly use another model, so there is no fallback."""
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


register_backend(HEURISTIC, heuristic_backend)
register_backend("openai:", openai_backend)
register_backend("anthropic:", anthropic_backend)
# The agent CLIs, with their own default model or a named one (claude-cli:sonnet).
register_backend("claude-cli", claude_cli_backend)
register_backend("claude-cli:", claude_cli_backend)
register_backend("codex-cli", codex_cli_backend)
register_backend("codex-cli:", codex_cli_backend)
