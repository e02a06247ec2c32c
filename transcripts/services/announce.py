"""Send a ``transcripts.signals`` signal once the current transaction commits, so nothing
is heard before its write is durable; ``send_robust`` keeps a failing receiver from
failing the write or silencing the receivers after it (Django logs it).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from ..core.keys import slot_name_for_key
from ..models import Session
from ..signals import session_deleted, session_rewritten


def announce(signal: Signal, sender: Any, **kwargs: Any) -> None:
    transaction.on_commit(partial(signal.send_robust, sender=sender, **kwargs))


def announce_session_rewritten(key: str, reason: str) -> None:
    """The transcript of ``key`` was rewritten in place (``rewind``, ``rotate``, ``purge``)."""
    announce(
        session_rewritten, Session, session_key=key, slot_name=slot_name_for_key(key), reason=reason
    )


def announce_session_deleted(key: str) -> None:
    announce(session_deleted, Session, session_key=key, slot_name=slot_name_for_key(key))
