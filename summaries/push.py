"""Push seam: "a summary for this slot was stored". Called after the database commit.

The realtime layer registers a sender (Channels group send); tests register recorders.
Frames are hints: a client that missed one re-syncs from the API.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

Sender = Callable[[str], None]
_senders: list[Sender] = []


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
