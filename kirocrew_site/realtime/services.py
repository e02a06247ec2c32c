"""The one way a frame leaves the server: a group send to everyone who may see the slot.

Called from the receivers, which run after the commit that made the frame true (every
signal they listen to is sent after commit). Frames are hints: a client that missed one
re-syncs from the API, so a failed send is logged by the receiver, never retried.
"""

from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .frames import Frame
from .groups import slot_groups
from .relay import frame_spool


def frame_send(slot_name: str, frame: Frame) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    groups = slot_groups(slot_name)
    wire = frame.wire()
    if frame_spool(layer, groups, [wire]):
        return  # the server's relay sends it: this process's in-memory layer reaches no socket

    async def fan_out() -> None:  # one loop hop for every group, not one per group
        for group in groups:
            await layer.group_send(group, {"type": "frame.send", "frame": wire})

    async_to_sync(fan_out)()
