"""The revocation messages (``revocation.py`` sends them, the consumer acts on them, the
relay carries them between processes): their kinds, names and check. Pure."""

from __future__ import annotations

import hashlib
import re
from typing import Any

AUTH_REVOKED = "auth.revoked"
AUTH_RECHECK = "auth.recheck"
AUTH_KINDS = frozenset({AUTH_REVOKED, AUTH_RECHECK})
PK_NAMES = frozenset({"user", "app"})  # named by their primary key, in decimal
_TAG = re.compile(r"[0-9a-f]{32}")  # session_tag's form


def session_tag(session_key: str) -> str:
    # Not the key itself: a message is readable by whoever reads the channel layer
    # (Redis), and a session key is a bearer credential.
    return hashlib.sha256(session_key.encode()).hexdigest()[:32]


def auth_accepted(message: dict[str, Any]) -> dict[str, Any]:
    """A revocation as ``revocation.py`` sends it, or ``ValueError``: its kind and exactly
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
