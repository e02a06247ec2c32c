"""Push seam: "a summary for this slot was stored". Called after the database commit.

The realtime layer registers a sender (Channels group send); tests register recorders.
Frames are hints: a client that missed one re-syncs from the API.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .frames import NotificationData, NotificationFrame

log = logging.getLogger(__name__)

Sender = Callable[[str], None]
FrameSender = Callable[[str, dict[str, Any]], None]  # (slot name, wire frame)
_senders: list[Sender] = []
_frame_senders: list[FrameSender] = []


def register_sender(sender: Sender) -> None:
    if sender not in _senders:
        _senders.append(sender)


def unregister_sender(sender: Sender) -> None:
    if sender in _senders:
        _senders.remove(sender)


def push_session_summary(slot_name: str) -> None:
    """Tell connected clients the slot's summary changed; never raises into the pass."""
    for sender in list(_senders):
        try:
            sender(slot_name)
        except Exception:
            log.warning("session_summary push for %s failed", slot_name, exc_info=True)


def register_frame_sender(sender: FrameSender) -> None:
    if sender not in _frame_senders:
        _frame_senders.append(sender)


def unregister_frame_sender(sender: FrameSender) -> None:
    if sender in _frame_senders:
        _frame_senders.remove(sender)


def push_frame(slot_name: str, frame: dict[str, Any]) -> None:
    """Send a turn/row/notification frame for a slot; never raises into the caller."""
    for sender in list(_frame_senders):
        try:
            sender(slot_name, frame)
        except Exception:
            log.warning("%s push for %s failed", frame.get("type"), slot_name, exc_info=True)


def push_notification(slot_name: str, title: str) -> None:
    """A bell-feed entry for a slot (e.g. "Summary updated"), stamped now. A separate
    frame from ``session_summary``, which is never wrapped as a notification."""
    ts = datetime.now().astimezone().isoformat()
    frame = NotificationFrame(data=NotificationData(key=slot_name, title=title, ts=ts))
    push_frame(slot_name, frame.wire())
