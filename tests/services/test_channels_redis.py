"""The Redis channel layer end to end, in process: a ``group_send`` made through
channels-redis reaches a ``WebsocketCommunicator`` connected to the real ASGI application
(``kirocrew_site.asgi.application``: middleware, routing, the dashboard consumer).

The layer is the one settings configure from ``REDIS_URL``; its database is flushed
before and after each test (CI gives the suite a database number of its own).
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from kirocrew_site.realtime.groups import DASHBOARD_GROUP, app_group
from summaries.signals import summary_stored
from tests.services.conftest import connect
from transcripts.services import session_create

pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(60),
]


async def test_a_group_send_through_redis_reaches_the_socket(layer, redis_db, app_token):
    app_id, token = app_token

    def own_slot() -> str:  # a socket relays frames only about its app's own slots
        from transcripts.models import App

        return session_create(name="owned", app=App.objects.get(pk=app_id)).name

    own = await sync_to_async(own_slot)()
    comm = await connect(token)
    try:
        group = app_group(app_id)
        # The membership lives in Redis, not in this process.
        assert redis_db.zcard(f"{layer.prefix}:group:{group}") == 1
        frame = {"type": "notification", "data": {"key": own, "title": "über ✓", "ts": "t"}}

        await layer.group_send(group, {"type": "frame.send", "frame": frame})

        assert await comm.receive_json_from(timeout=10) == frame
        # Another group's message never arrives here.
        await layer.group_send(DASHBOARD_GROUP, {"type": "frame.send", "frame": {"x": 1}})
        assert await comm.receive_nothing(timeout=0.5)
    finally:
        await comm.disconnect()
    assert redis_db.zcard(f"{layer.prefix}:group:{app_group(app_id)}") == 0


async def test_a_stored_summary_reaches_the_owning_apps_socket(layer, app_token):
    """``summary_stored`` (what the pass sends after its commit) over Redis: the realtime
    receiver's ``session_summary`` frame, then its bell-feed notification."""
    app_id, token = app_token

    def own_slot() -> str:
        from transcripts.models import App

        return session_create(name="owned", app=App.objects.get(pk=app_id)).name

    name = await sync_to_async(own_slot)()
    comm = await connect(token)
    try:
        await sync_to_async(summary_stored.send)(sender=None, slot_name=name)

        frame = await comm.receive_json_from(timeout=10)
        assert frame == {"type": "session_summary", "data": {"key": name}}
        note = await comm.receive_json_from(timeout=10)
        assert (note["type"], note["data"]["key"]) == ("notification", name)
        assert note["data"]["title"] == "Summary updated"
    finally:
        await comm.disconnect()
