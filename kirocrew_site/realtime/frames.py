"""What travels on the channel layer to a socket: typed frames (the wire format the
dashboard's JS and app clients read) and the revocation messages (``receivers.py`` sends
them, the consumer acts on them). Every frame is a hint: a client that missed one
re-syncs from the API (channel layers drop messages under load by design)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

# The largest frame a socket relays (its compact JSON). Real frames are a few hundred
# bytes; anything bigger was not built by frame_send (a forged layer message).
MAX_FRAME_BYTES = 4096


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Frame(_Strict):
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
    type: Literal["pong"] = "pong"
    data: Empty = Empty()


_SOCKET_ONLY = (HelloFrame, PongFrame)  # one socket's own answers, never sent to a group


def frame_validate(frame: object) -> dict[str, Any]:
    """The frame rebuilt through its model (the wire form ``frame_send`` builds), or
    ``ValueError`` (pydantic's ``ValidationError`` is one). The one check every frame
    passes before a socket, whichever way it came (the relay's files, Redis)."""
    if not isinstance(frame, dict):
        raise ValueError("a frame is an object")
    kind = frame.get("type")
    # Looked up at each use: a frame model added here is relayed with no other change.
    models = {
        cls.model_fields["type"].default: cls
        for cls in Frame.__subclasses__()
        if cls not in _SOCKET_ONLY and "type" in cls.model_fields
    }
    model = models.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ValueError(f"unknown frame type {str(kind)[:40]!r}")
    wire = model.model_validate(frame).wire()
    if len(json.dumps(wire, separators=(",", ":"))) > MAX_FRAME_BYTES:
        raise ValueError(f"frame over {MAX_FRAME_BYTES} bytes")
    return wire


AUTH_REVOKED = "auth.revoked"
AUTH_RECHECK = "auth.recheck"
# A tuple: a forged type that is a list or an object compares unequal instead of failing to hash.
AUTH_KINDS = (AUTH_REVOKED, AUTH_RECHECK)
PK_NAMES = frozenset({"user", "app"})  # named by their primary key, in decimal
_TAG = re.compile(r"[0-9a-f]{32}")  # session_tag's form


def layer_message(message: dict[str, Any]) -> dict[str, Any]:
    """What a group send carries: a revocation as itself, a frame for ``frame_send``."""
    return message if message["type"] in AUTH_KINDS else {"type": "frame.send", "frame": message}


def session_tag(session_key: str) -> str:
    # Not the key itself: a message is readable by whoever reads the channel layer
    # (Redis), and a session key is a bearer credential.
    return hashlib.sha256(session_key.encode()).hexdigest()[:32]


def auth_accepted(message: dict[str, Any]) -> dict[str, Any]:
    """A revocation as ``receivers.py`` sends it, or ``ValueError``: its kind and exactly
    one name (a session tag, a user's or an app's pk). A name-less message would concern
    every socket: whoever can write to the channel layer could close them all."""
    names = {k: v for k, v in message.items() if k != "type"}
    if message.get("type") not in AUTH_KINDS or len(names) != 1:
        raise ValueError("not a revocation naming one credential")
    for name, value in names.items():
        if name == "session" and isinstance(value, str) and _TAG.fullmatch(value):
            continue
        if name in PK_NAMES and isinstance(value, str) and value.isascii() and value.isdigit():
            continue
        raise ValueError(f"bad revocation name {str(name)[:20]!r}")
    return {"type": message["type"], **names}
