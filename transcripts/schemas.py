"""Request and response bodies of the slot routes (the stable turn-loop interface)."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema

from .core.content import MAX_TEXT_CHARS
from .core.roles import Role

MemoryMode = Literal["", "persistent", "default", "incognito", "temporary"]
SlotName = Field(
    default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"
)


class ErrorOut(Schema):
    error: str
    code: str


class SlotCreateIn(Schema):
    name: str | None = SlotName
    title: str = Field(default="", max_length=500)
    memory_mode: MemoryMode = ""


class SlotPatchIn(Schema):
    title: str | None = Field(default=None, max_length=500)


class SlotOut(Schema):
    name: str
    key: str
    title: str
    app: str
    memory_mode: str
    running: bool
    user_turns: int
    last_activity: str | None
    summary: str = ""
    source: str = ""  # kirocrew | claude-code | codex | api (core/provenance.py)
    project: str = ""  # the cwd or project path line 0 names


class SlotListOut(Schema):
    slots: list[SlotOut]
    next: str | None = None  # the cursor of the next (older) page; None on the last


class TranscriptOut(Schema):
    rows: list[dict[str, Any]]
    report: dict[str, Any]
    next: str | None


class RewindIn(Schema):
    after_ts: str = Field(min_length=1, max_length=64)


class ForkIn(Schema):
    name: str | None = SlotName


class TurnIn(Schema):
    content: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


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
