"""Typed WebSocket frames. Every frame is a hint: a client that missed one re-syncs from
the API (channel layers drop messages under load by design)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class _Strict(BaseModel):
    """Every frame part: unknown fields refused, immutable once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class _Frame(_Strict):
    def wire(self) -> dict[str, Any]:
        return self.model_dump()


class SlotRef(_Strict):
    key: str  # the SLOT name (what URLs use), never the transcript key


class SessionSummaryFrame(_Frame):
    """A summary was stored for this slot: refetch GET …/summary. Never a notification."""

    type: Literal["session_summary"] = "session_summary"
    data: SlotRef


class TurnData(_Strict):
    key: str
    running: bool
    stop_reason: str = ""


class TurnFrame(_Frame):
    type: Literal["turn"] = "turn"
    data: TurnData


class RowData(_Strict):
    key: str
    ts: str
    role: str


class RowFrame(_Frame):
    """A row (or a revision) landed: fetch the transcript ``after`` the last seen ts."""

    type: Literal["row"] = "row"
    data: RowData


class NotificationData(_Strict):
    key: str
    title: str
    ts: str


class NotificationFrame(_Frame):
    type: Literal["notification"] = "notification"
    data: NotificationData
