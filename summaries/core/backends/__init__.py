"""Summarizer backends for the background model role (DESIGN §5.3).

``resolve_backend`` maps the ``KIROCREW_SUMMARY_MODEL`` value to a backend. This
package is Django-free: the caller reads settings and passes plain values in.
"""

from __future__ import annotations

from collections.abc import Callable

from summaries.core.backends.base import (
    BackendBadReply,
    BackendError,
    BackendHTTPError,
    BackendTimeout,
    BackendUnavailable,
    SummaryBackend,
)
from summaries.core.backends.openai import OpenAIBackend

__all__ = [
    "HEURISTIC_SPEC",
    "OPENAI_PREFIX",
    "BackendBadReply",
    "BackendError",
    "BackendHTTPError",
    "BackendTimeout",
    "BackendUnavailable",
    "OpenAIBackend",
    "SummaryBackend",
    "resolve_backend",
]

HEURISTIC_SPEC = "heuristic"
OPENAI_PREFIX = "openai:"


def resolve_backend(
    spec: str,
    *,
    base_url: str | None,
    api_key: str | None,
    timeout: float,
    max_tokens: int,
    heuristic_factory: Callable[[], SummaryBackend],
) -> SummaryBackend:
    """Build the backend named by ``spec``: ``"heuristic"`` or ``"openai:<model>"``.

    Surrounding whitespace is ignored (values often come from env files); the
    keywords are case-sensitive, exactly as documented. Anything else, including
    ``"openai:"`` with no model or an ``openai:`` spec without a base URL, raises
    ``ValueError``: a misconfigured background role must fail loudly rather than
    quietly use some other model, so there is no fallback of any kind.
    """
    cleaned = spec.strip()
    if cleaned == HEURISTIC_SPEC:
        return heuristic_factory()
    if cleaned.startswith(OPENAI_PREFIX):
        model = cleaned.removeprefix(OPENAI_PREFIX).strip()
        if not model:
            raise ValueError(
                "KIROCREW_SUMMARY_MODEL 'openai:' needs a model name, e.g. 'openai:gpt-4o-mini'"
            )
        if not (base_url or "").strip():
            raise ValueError(
                f"KIROCREW_SUMMARY_MODEL 'openai:{model}' needs KIROCREW_OPENAI_BASE_URL, "
                "e.g. http://127.0.0.1:11434/v1"
            )
        return OpenAIBackend(model, base_url or "", api_key, timeout=timeout, max_tokens=max_tokens)
    shown = cleaned if len(cleaned) <= 80 else cleaned[:80] + "..."
    raise ValueError(
        f"unknown KIROCREW_SUMMARY_MODEL {shown!r}: expected 'heuristic' or 'openai:<model>'"
    )
