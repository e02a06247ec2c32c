"""Bodies of the turn-loop and summary routes."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema

from transcripts.core.content import MAX_TEXT_CHARS


class TurnIn(Schema):
    content: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


# Roles a transcript keeps (the original's); transient UI roles are never persisted.
Role = Literal[
    "user",
    "assistant",
    "system",
    "error",
    "tool",
    "tool_call",
    "tool_result",
    "inject",
    "notice",
    "nudge",
    "merged_summary",
]


class RowIn(Schema):
    role: Role
    content: str = Field(max_length=MAX_TEXT_CHARS)
    meta: dict[str, Any] | None = None


class RevisionIn(Schema):
    # Every string in it is capped like a row's content (MAX_TEXT_CHARS), and it may not
    # change role or ts: transcripts.core.content and the store's append_revision.
    patch: dict[str, Any] = Field(min_length=1)


class TurnEndIn(Schema):
    stop_reason: str = Field(min_length=1, max_length=64)


class TsOut(Schema):
    ts: str


class SummaryOut(Schema):
    enabled: bool
    stale: bool
    intents: list[dict[str, Any]]
    constraints: list[str]
    generated_at: float | None
    user_turns: int | None
    last_activity: str | None
    generate_state: Literal["ready", "too_few_turns", "unavailable"]
    covers_through_turn: int | None
    new_turns: int | None
    model: str | None
