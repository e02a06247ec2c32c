"""Bodies of the turn-loop and summary routes."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict

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


class EvidenceOut(Schema):
    """Why an intent has its state: the one transcript row that decided it."""

    turn: int = Field(ge=1, description="The person's turn number it belongs to.")
    ts: str | None = Field(None, description="The row's ts: the panel links to that row.")
    kind: Literal[
        "test_passed",
        "test_failed",
        "merged_unverified",
        "dropped",
        "user_confirmed",
        "user_deferred",
        "pending_decision",
    ]
    quote: str = Field(description="What the row said, cut at a word boundary, redacted.")


class IntentOut(BaseModel):
    """One intent (title, ranges, status, verified, state, origin_turn, initial_intent,
    progress, next_steps, last_touched_turn, as the summary payload stores them) and
    ``evidence``: the row behind its state, null when nothing either way was seen."""

    # A plain pydantic model: ninja's Schema reads declared fields only, and the stored
    # intent's other fields must pass through as they are.
    model_config = ConfigDict(extra="allow")

    title: str
    evidence: EvidenceOut | None = None


class SummaryOut(Schema):
    enabled: bool
    stale: bool
    intents: list[IntentOut]
    constraints: list[str]
    generated_at: float | None
    user_turns: int | None
    last_activity: str | None
    generate_state: Literal["ready", "too_few_turns", "unavailable"]
    covers_through_turn: int | None
    new_turns: int | None
    model: str | None
