"""Signals in, messages out: transcripts' and summaries' news as frames (hints: a failed
send is logged, never retried or raised into its sender; the client converges on its next
read), and credential changes as ``auth.revoked`` (close now) or ``auth.recheck``
(re-validate: a rotated token's successor stays open). All are sent after the commit (a
frame never announces a rollback; a recheck before it would see the old row); a lost
revocation is caught by the consumer's periodic re-validation. A delete or a rewind has no
frame: an open page learns of it from its next read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial, wraps
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from .frames import (
    AUTH_RECHECK,
    AUTH_REVOKED,
    Frame,
    NotificationData,
    NotificationFrame,
    RowData,
    RowFrame,
    SessionSummaryFrame,
    SlotRef,
    TurnData,
    TurnFrame,
    layer_message,
    session_tag,
)
from .groups import DASHBOARD_GROUP, app_group, slot_groups
from .relay import frame_spool

log = logging.getLogger(__name__)

SUMMARY_UPDATED = "Summary updated"  # the bell feed's title for a stored summary

Receiver = Callable[..., None]


def frame_send(slot_name: str, frame: Frame) -> None:
    """The one way a frame leaves the server: a group send to everyone who may see the slot."""
    _group_send(slot_groups(slot_name), frame.wire())


def _group_send(groups: list[str], message: dict[str, Any]) -> None:
    """A frame's wire form or a revocation to every group. Spooled in a process without
    Redis that is not the server: the server's relay sends it (this layer reaches no socket)."""
    layer = get_channel_layer()
    if layer is None or frame_spool(layer, groups, [message]):
        return
    sent = layer_message(message)

    async def fan_out() -> None:  # one loop hop for every group, not one per group
        for group in groups:
            await layer.group_send(group, sent)

    async_to_sync(fan_out)()


def _frames(build: Callable[..., Iterable[Frame]]) -> Receiver:
    """A receiver that sends the frames ``build`` makes for the slot, in order; each failed
    send is logged on its own (the next frame may still get through)."""

    @wraps(build)
    def receiver(sender: Any, *, slot_name: str, **kwargs: Any) -> None:
        try:
            frames = list(build(slot_name=slot_name, **kwargs))
        except Exception:
            log.warning("%s for %s failed", build.__name__, slot_name, exc_info=True)
            return
        for frame in frames:
            try:
                frame_send(slot_name, frame)
            except Exception:
                kind = frame.wire()["type"]
                log.warning("%s push for %s failed", kind, slot_name, exc_info=True)

    return receiver


@_frames
def on_rows_appended(
    *, slot_name: str, ts: list[str], roles: list[str], **_: Any
) -> Iterable[Frame]:
    for stamp, role in zip(ts, roles, strict=False):
        yield RowFrame(data=RowData(key=slot_name, ts=stamp, role=role))


@_frames
def on_revision_appended(*, slot_name: str, ts: str, **_: Any) -> Iterable[Frame]:
    """A ``row`` frame with role ``revision``: the client re-reads the turn."""
    yield RowFrame(data=RowData(key=slot_name, ts=ts, role="revision"))


@_frames
def on_turn_started(*, slot_name: str, **_: Any) -> Iterable[Frame]:
    yield TurnFrame(data=TurnData(key=slot_name, running=True))


@_frames
def on_turn_ended(
    *, slot_name: str, stop_reason: str = "", quiet: bool = False, **_: Any
) -> Iterable[Frame]:
    if not quiet:  # a one-off import's turn end: no frame per imported session
        yield TurnFrame(data=TurnData(key=slot_name, running=False, stop_reason=stop_reason))


@_frames
def on_summary_stored(*, slot_name: str, **_: Any) -> Iterable[Frame]:
    """``session_summary`` (refetch the panel), then a separate bell-feed entry stamped now:
    the summary frame is never wrapped as a notification."""
    yield SessionSummaryFrame(data=SlotRef(key=slot_name))
    ts = datetime.now().astimezone().isoformat()
    yield NotificationFrame(data=NotificationData(key=slot_name, title=SUMMARY_UPDATED, ts=ts))


LOGIN_ONLY = frozenset({"last_login"})  # the save every login makes: nothing revoked


def auth_send(group: str, kind: str, **names: str) -> None:
    try:  # from a terminal (create_app --rotate) too: the relay carries it like a frame
        _group_send([group], {"type": kind, **names})
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
