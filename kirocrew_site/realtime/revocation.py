"""Credentials revoked, sockets closed: a socket is authenticated once, at connect, so
whatever later revokes what it was opened with must tell it, through its own group.

``auth.revoked`` (close now) names a login session (logout, flush, expiry cleanup) or a
deleted user. ``auth.recheck`` (re-validate, close if it no longer holds) names an app
whose token was rotated (a socket opened with the new token stays open) or a saved user
(a new password, ``is_active`` off). Each is sent after the commit that made it true (a
recheck before it would still see the old row); a failed send is logged, and the
consumer's periodic re-validation closes the socket in the end.
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
    # Sent after commit already.
    auth_send(app_group(app_id), AUTH_RECHECK, app=str(app_id))


def on_user_logged_out(sender: Any, request: Any = None, **_: Any) -> None:
    # Sent before the session is flushed, while its key is still the socket's.
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if session_key:
        _after_commit(AUTH_REVOKED, session=session_tag(session_key))


def on_login_session_deleted(sender: Any, instance: Any, **_: Any) -> None:
    # Covers what never passes ``user_logged_out`` (the database session engines).
    _after_commit(AUTH_REVOKED, session=session_tag(instance.session_key))


def on_user_saved(
    sender: Any, instance: Any, created: bool = False, update_fields: Any = None, **_: Any
) -> None:
    if created or (update_fields is not None and frozenset(update_fields) <= LOGIN_ONLY):
        return  # a new user has no socket yet; a login revokes nothing
    _after_commit(AUTH_RECHECK, user=str(instance.pk))


def on_user_deleted(sender: Any, instance: Any, **_: Any) -> None:
    _after_commit(AUTH_REVOKED, user=str(instance.pk))
