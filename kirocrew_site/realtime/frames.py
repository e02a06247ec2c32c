"""Typed WebSocket frames: the wire format the dashboard's JS and app clients read.

Every frame is a hint: a client that missed one re-syncs from the API (channel layers drop
messages under load by design). A new frame type is one model here, one receiver in
``receivers.py`` and one handler in ``static/js/dashboard.js``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class _Strict(BaseModel):
    """Every frame part: unknown fields refused, immutable once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Frame(_Strict):
    """A whole frame: ``{"type": ..., "data": {...}}`` on the wire."""

    def wire(self) -> dict[str, Any]:
        return self.model_dump()


class SlotRef(_Strict):
    key: str  # the SLOT name (what URLs use), never the transcript key


class SessionSummaryFrame(Frame):
    """A summary was stored for this slot: refetch GET …/summary. Never a notification."""

    type: Literal["session_summary"] = "session_summary"
    data: SlotRef


class TurnData(_Strict):
    key: str
    running: bool
    stop_reason: str = ""


class TurnFrame(Frame):
    type: Literal["turn"] = "turn"
    data: TurnData


class RowData(_Strict):
    key: str
    ts: str
    role: str


class RowFrame(Frame):
    """A row (or a revision) landed: fetch the transcript ``after`` the last seen ts."""

    type: Literal["row"] = "row"
    data: RowData


class NotificationData(_Strict):
    key: str
    title: str
    ts: str


class NotificationFrame(Frame):
    type: Literal["notification"] = "notification"
    data: NotificationData


class HelloData(_Strict):
    scope: Literal["dashboard", "app"]  # which group the socket joined


class HelloFrame(Frame):
    """The first frame on an accepted socket: (re)subscribed, so re-read what you show."""

    type: Literal["hello"] = "hello"
    data: HelloData


class Empty(_Strict):
    pass


class PongFrame(Frame):
    """The answer to a client's ``{"type": "ping"}``."""

    type: Literal["pong"] = "pong"
    data: Empty = Empty()
