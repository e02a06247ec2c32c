"""Bodies of the turn-loop and summary routes."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema


class TurnIn(Schema):
    content: str = Field(min_length=1, max_length=4_000_000)


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
    content: str = Field(max_length=4_000_000)
    meta: dict[str, Any] | None = None


class RevisionIn(Schema):
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
