"""The audit trail of denials."""

from __future__ import annotations

import logging

from ..models import SecurityEvent

log = logging.getLogger(__name__)


def _clip(value: str, field: str) -> str:
    limit = getattr(SecurityEvent._meta.get_field(field), "max_length", None) or 200
    return value if len(value) <= limit else value[: limit - 1] + "…"


def security_event_record(
    *,
    caller: str,
    operation: str,
    outcome: str = "denied",
    source: str = "",
    resource: str = "",
    error: str = "",
) -> SecurityEvent:
    """Record one security-relevant outcome; ``caller`` names, never authenticates (no tokens)."""
    log.warning(
        "security event: %s %s by %r on %r (%s)", operation, outcome, caller, resource, error
    )
    return SecurityEvent.objects.create(
        caller=_clip(caller, "caller"),
        operation=_clip(operation, "operation"),
        outcome=_clip(outcome, "outcome"),
        source=_clip(source, "source"),
        resource=_clip(resource, "resource"),
        error=_clip(error, "error"),
    )
