"""The frame relay: other processes' frames reach the server's sockets without Redis (an
``InMemoryChannelLayer`` is per process). The server's relay task (started on its first
connection: daphne sends no lifespan event) touches the heartbeat and sends spooled frames;
other processes spool only while the heartbeat is fresh.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asgiref.typing import ASGI3Application, ASGIReceiveCallable, ASGISendCallable, Scope
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from django.conf import settings

from .core.spool import (
    SpoolWriter,
    heartbeat_drop,
    heartbeat_fresh,
    heartbeat_touch,
    spool_prepare,
    spool_take,
)
from .frames import AUTH_KINDS, auth_accepted, frame_validate, layer_message
from .groups import GROUP_NAME

log = logging.getLogger(__name__)

TICK_S = 0.25  # the latency a relayed frame adds, at most, on top of the writer's own


class _State:
    task: asyncio.Task[None] | None = None
    token = ""  # set once this process has started a relay: it is the server, send locally
    last_error = ""


_state = _State()
_writer = SpoolWriter()
os.register_at_fork(after_in_child=_writer.forget)  # the agent import forks its workers


def spool_folder() -> Path:
    return Path(settings.KIROCREW_HOME) / "frames"


def group_accepted(group: str) -> bool:
    return GROUP_NAME.fullmatch(group) is not None


def frame_accepted(frame: dict[str, Any]) -> dict[str, Any]:
    """The frame rebuilt through its model, or ``ValueError``. A revocation (``create_app
    --rotate`` in a terminal) rides the same files as its own message: it can only close
    sockets."""
    if frame.get("type") in AUTH_KINDS:
        return auth_accepted(frame)
    return frame_validate(frame)  # the consumer checks the same, whatever layer delivered


def frame_spool(
    layer: BaseChannelLayer, groups: Sequence[str], frames: list[dict[str, Any]]
) -> bool:
    """Hand the frames to the server's relay if one runs elsewhere; False: send locally."""
    if not isinstance(layer, InMemoryChannelLayer) or _state.token:
        return False
    folder = spool_folder()
    if not heartbeat_fresh(folder, time.time()):
        return False  # no server: a local send reaches no one, but leaves nothing behind
    _writer.send(folder, groups, frames)  # written within LINGER_S, with its neighbours
    return True


def relay_ensure() -> None:
    """Start the relay on the running loop unless it already runs there (tests have a loop
    each; daphne has one)."""
    loop = asyncio.get_running_loop()
    task = _state.task
    if task is not None and not task.done() and task.get_loop() is loop:
        return
    layer = get_channel_layer()
    if not isinstance(layer, InMemoryChannelLayer):
        return  # Redis (or no layer): other processes reach the sockets through it
    if not _state.token:
        _state.token = secrets.token_hex(16)
        atexit.register(_heartbeat_release)
    _state.task = loop.create_task(_relay_run(layer), name="kirocrew-frame-relay")


def relay_asgi(app: ASGI3Application) -> ASGI3Application:
    async def with_relay(
        scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        relay_ensure()
        await app(scope, receive, send)

    return with_relay


async def relay_tick(layer: BaseChannelLayer) -> bool:
    """One pass: heartbeat, take, send. True when files are left for another pass at once."""
    folder = spool_folder()
    spool_prepare(folder)  # every pass: a folder removed under a running server comes back
    heartbeat_touch(folder, _state.token)
    taken = spool_take(
        folder, now=time.time(), accept_group=group_accepted, accept_frame=frame_accepted
    )
    for name, why in taken.malformed:
        log.warning("frame relay dropped a malformed file %r: %s", name, why)
    if taken.stale:
        log.info("frame relay dropped %d stale frame file(s) unread", taken.stale)
    for spooled in taken.batches:
        for message in map(layer_message, spooled.frames):
            for group in spooled.groups:
                await layer.group_send(group, message)
        # The in-memory layer's sends never yield: let the consumers drain their queues
        # (capacity 100) between sends, or a burst from an import overflows them.
        await asyncio.sleep(0)
    return taken.more


async def _relay_run(layer: BaseChannelLayer) -> None:
    """A failing pass is logged once per distinct error (not four times a second)."""
    while True:
        more = False
        try:
            more = await relay_tick(layer)
        except Exception as exc:
            if repr(exc) != _state.last_error:
                log.warning("frame relay pass failed", exc_info=True)
            _state.last_error = repr(exc)
        else:
            if _state.last_error:
                log.info("frame relay recovered")
            _state.last_error = ""
        await asyncio.sleep(0 if more else TICK_S)


def _heartbeat_release() -> None:
    """At exit: writers stop spooling at once instead of for ``FRESH_S`` more seconds."""
    heartbeat_drop(spool_folder(), _state.token)
