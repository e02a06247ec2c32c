"""Which rows are a person's turns. Shared by the mirror's counts and the summarizer."""

from __future__ import annotations

from typing import Any

from .roles import Role

# Automation that posts under role "user" (the original's nine prefixes). Counting one as
# a person's turn invents a goal nobody had.
INJECTED_PREFIXES: tuple[str, ...] = (
    "[cron notification",
    "[subagent completion event]",
    "[subagent batch completion event]",
    "[auto-nudge cycle",
    "[monitor wake]",
    "[tool refusal",
    "[tool stall",
    "=== restored context",
    "[system]",
)


def is_injected(content: str) -> bool:
    return content.lstrip().lower().startswith(INJECTED_PREFIXES)


def is_user_turn(row: Any) -> bool:
    """A genuine user turn: role ``user``, non-blank string content, not automation."""
    if not isinstance(row, dict) or row.get("role") != Role.USER:
        return False
    content = row.get("content")
    return isinstance(content, str) and bool(content.strip()) and not is_injected(content)
