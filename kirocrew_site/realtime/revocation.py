"""Credentials revoked, sockets closed: a socket is authenticated once, at connect, so
whatever later revokes what it was opened with must tell it.

Two messages, sent to the group whose frames the credential's sockets relay (no group of
their own: one socket, one group), naming whose credential they concern:

``auth.revoked``
    close now, no question asked. To ``dashboard`` naming a login session (its
    ``session_tag``: logout, flush, expiry cleanup) or a user (deleted).
``auth.recheck``
    re-validate the credential against the database and close if it no longer holds.
    To ``app-<id>`` naming the app (its token was rotated: a socket opened with the new
    token in the instant after the commit stays open), to ``dashboard`` naming a user
    (saved: a new password rotates the session auth hash; ``is_active`` off refuses the user).

Each is sent after the commit that made it true (a recheck before it would still see the
old row) and never raises into the sender: a failed send is logged, and the consumer's own
periodic re-validation (``consumer.REVALIDATE_SECONDS``) closes the socket in the end.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from .core.auth import AUTH_RECHECK, AUTH_REVOKED, session_tag
from .groups import DASHBOARD_GROUP, app_group
from .relay import frame_spool

log = logging.getLogger(__name__)

LOGIN_ONLY = frozenset({"last_login"})  # the save every login makes: nothing revoked


def auth_send(group: str, kind: str, **names: str) -> None:
    message = {"type": kind, **names}
    try:
        layer = get_channel_layer()
        if layer is None:
            return
        # Sent from another process (a terminal's create_app --rotate) without Redis: the
        # server's relay carries it to the sockets, as it carries frames.
        if not frame_spool(layer, [group], [message]):
            async_to_sync(layer.group_send)(group, message)
    except Exception:
        log.warning("%s to %s failed", kind, group, exc_info=True)


def _after_commit(kind: str, **names: str) -> None:
    transaction.on_commit(partial(auth_send, DASHBOARD_GROUP, kind, **names))


def on_app_token_rotated(sender: Any, *, app_id: int, **_: Any) -> None:
    """Sent after commit by ``app_token_rotate`` (``transcripts.signals``)."""
    auth_send(app_group(app_id), AUTH_RECHECK, app=str(app_id))


def on_user_logged_out(sender: Any, request: Any = None, **_: Any) -> None:
    # Sent before the session is flushed, while its key is still the socket's.
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if session_key:
        _after_commit(AUTH_REVOKED, session=session_tag(session_key))


def on_login_session_deleted(sender: Any, instance: Any, **_: Any) -> None:
    """A row of Django's session table deleted: a flush, a key cycled at login, expiry
    cleanup. Covers what never passes ``user_logged_out`` (the database session engines)."""
    _after_commit(AUTH_REVOKED, session=session_tag(instance.session_key))


def on_user_saved(
    sender: Any, instance: Any, created: bool = False, update_fields: Any = None, **_: Any
) -> None:
    if created or (update_fields is not None and frozenset(update_fields) <= LOGIN_ONLY):
        return  # a new user has no socket yet; a login revokes nothing
    _after_commit(AUTH_RECHECK, user=str(instance.pk))


def on_user_deleted(sender: Any, instance: Any, **_: Any) -> None:
    _after_commit(AUTH_REVOKED, user=str(instance.pk))
