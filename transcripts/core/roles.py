"""The roles a transcript row keeps (the original's); transient UI roles are never stored."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    ERROR = "error"
    TOOL = "tool"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    INJECT = "inject"
    NOTICE = "notice"
    NUDGE = "nudge"
    MERGED_SUMMARY = "merged_summary"


# Rows a tool produced: shown as tool output, never as the agent's words.
TOOL_ROLES = frozenset({Role.TOOL, Role.TOOL_CALL, Role.TOOL_RESULT})
