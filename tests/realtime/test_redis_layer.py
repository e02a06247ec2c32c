"""The Redis channel layer as configured by settings (services profile only).

channels-redis waits for a message with a 5 s BZPOPMIN; redis-py 8 defaults its socket
read timeout to 5 s too, so with a bare URL every socket idle for 5 s died with 1011
("Timeout reading from 127.0.0.1:6379"). The settings give the layer a longer read
timeout; this pins it with a receive that waits longer than one blocking pop.
"""

from __future__ import annotations

import asyncio
import secrets

import pytest
from channels_redis.core import RedisChannelLayer

pytestmark = [pytest.mark.services, pytest.mark.slow]


async def test_a_receive_outlives_the_blocking_pop(settings):
    config = settings.CHANNEL_LAYERS["default"]
    assert config["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    layer = RedisChannelLayer(**config["CONFIG"], prefix=f"kc-test-{secrets.token_hex(4)}")
    channel = await layer.new_channel()

    async def send_later() -> None:
        await asyncio.sleep(RedisChannelLayer.brpop_timeout + 2)
        await layer.send(channel, {"type": "frame.send", "frame": {"type": "late"}})

    sender = asyncio.ensure_future(send_later())
    try:
        message = await asyncio.wait_for(layer.receive(channel), timeout=20)
    finally:
        await sender
        await layer.flush()
        await layer.close_pools()
    assert message == {"type": "frame.send", "frame": {"type": "late"}}
