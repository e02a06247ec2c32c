"""What another process with Redis access can make a socket do (services profile).

Anyone who can write to Redis can ``group_send`` any message to any group with the
layer's prefix. Each test sends its forged message from a separate process through
channels-redis's own ``group_send`` (as such a process would), then a genuine frame: the
socket relays the genuine one and nothing before it, so the forged one was dropped.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from kirocrew_site.realtime.groups import app_group
from tests.services.conftest import connect
from transcripts.models import App
from transcripts.services import app_create, session_create

pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(60),
]

_FORGER = """
import asyncio, json, sys
from channels_redis.core import RedisChannelLayer

async def main(url, prefix, group):
    layer = RedisChannelLayer(hosts=[url], prefix=prefix)
    await layer.group_send(group, json.load(sys.stdin))
    await layer.close_pools()

asyncio.run(main(*sys.argv[1:]))
"""


async def forge(layer: Any, group: str, message: dict[str, Any]) -> None:
    """``message`` sent to ``group`` by another process that has only Redis."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _FORGER, settings.REDIS_URL, layer.prefix, group,
        stdin=asyncio.subprocess.PIPE,
    )  # fmt: skip
    await proc.communicate(json.dumps(message).encode())
    assert proc.returncode == 0


def slot_of(app_id: int) -> str:
    return session_create(name=f"s-{secrets.token_hex(3)}", app=App.objects.get(pk=app_id)).name


def row(slot: str, ts: str) -> dict[str, Any]:
    return {"type": "row", "data": {"key": slot, "ts": ts, "role": "user"}}


async def test_a_forged_frame_about_another_apps_slot_never_reaches_the_socket(
    layer, app_token, caplog
):
    bob_id, bob_token = app_token
    alice = await sync_to_async(app_create)(name=f"alice-{secrets.token_hex(3)}")
    alices = await sync_to_async(slot_of)(alice[0].pk)
    bobs = await sync_to_async(slot_of)(bob_id)
    comm = await connect(bob_token)
    try:
        for ts in ("t0", "t1"):
            forged = {"type": "frame.send", "frame": row(alices, ts)}
            await forge(layer, app_group(bob_id), forged)
        await forge(layer, app_group(bob_id), {"type": "frame.send", "frame": row(bobs, "t2")})

        assert await comm.receive_json_from(timeout=10) == row(bobs, "t2")
        assert await comm.receive_nothing(timeout=0.5)
    finally:
        await comm.disconnect()
    # Logged once per socket: a flood of forged frames is not a flood of log lines.
    warned = [r for r in caplog.records if r.levelname == "WARNING" and alices in r.getMessage()]
    assert len(warned) == 1, [r.getMessage() for r in warned]


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "notification", "data": {"key": "{own}", "title": "x" * 200_000, "ts": "t"}},
        {"type": "script", "data": {"key": "{own}", "html": "<img onerror=alert(1)>"}},
        {"type": "row", "data": {"key": "{own}", "ts": 1, "role": ["user"]}},
        {"type": "hello", "data": {"scope": "dashboard"}},  # a socket's own frame
        "not a frame",
    ],
    ids=["oversize", "unknown-type", "wrong-field-types", "socket-only", "not-an-object"],
)
async def test_a_malformed_frame_from_the_layer_is_dropped(layer, app_token, frame):
    app_id, token = app_token
    own = await sync_to_async(slot_of)(app_id)
    if isinstance(frame, dict):
        frame = json.loads(json.dumps(frame).replace("{own}", own))
    comm = await connect(token)
    try:
        await forge(layer, app_group(app_id), {"type": "frame.send", "frame": frame})
        await forge(layer, app_group(app_id), {"type": "frame.send", "frame": row(own, "t2")})

        assert await comm.receive_json_from(timeout=10) == row(own, "t2")
    finally:
        await comm.disconnect()


@pytest.mark.parametrize(
    "message",
    [
        {"type": "auth.revoked"},
        {"type": "auth.revoked", "who": "everyone"},
    ],
    ids=["name-less", "unknown-name"],
)
async def test_a_revocation_naming_no_credential_closes_nothing(layer, app_token, message):
    app_id, token = app_token
    own = await sync_to_async(slot_of)(app_id)
    comm = await connect(token)
    try:
        await forge(layer, app_group(app_id), message)
        await forge(layer, app_group(app_id), {"type": "frame.send", "frame": row(own, "t2")})

        assert await comm.receive_json_from(timeout=10) == row(own, "t2")  # still open
    finally:
        await comm.disconnect()


async def test_a_revocation_naming_the_app_closes_its_socket(layer, app_token):
    """The rotation's recheck names the app: a socket whose token no longer holds closes."""
    app_id, token = app_token
    comm = await connect(token)
    await sync_to_async(App.objects.filter(pk=app_id).update)(token_hash="0" * 64)
    try:
        await forge(layer, app_group(app_id), {"type": "auth.recheck", "app": str(app_id)})

        assert (await comm.receive_output(timeout=10))["code"] == 4401
    finally:
        await comm.disconnect()
