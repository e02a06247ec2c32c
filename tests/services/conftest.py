"""The services profile against the real servers: PostgreSQL (``DATABASE_URL``, pytest-django
creates and drops ``test_<name>``) and Redis (``REDIS_URL``). Every module here is marked
``services``: the root conftest skips them unless both are configured.

These fixtures refuse to run on anything else: a services test that silently fell back to
SQLite or the in-memory layer would pass while proving nothing. With ``REDIS_URL`` set the
Celery broker is Redis and no worker runs in these tests, so the ones that need a summary
pass ask for ``eager_tasks`` (the e2e suite covers a real worker).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from channels.layers import channel_layers, get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from kirocrew_site.asgi import application
from transcripts.services import app_create


@pytest.fixture
def on_postgres(db: None) -> None:
    from django.db import connection

    assert connection.vendor == "postgresql", connection.vendor


@pytest.fixture
def services_home(offline_home: Path, summaries_on_via_env: None) -> Path:
    """A private data root; summaries on (one turn is enough) with the offline summarizer,
    whatever the developer's shell says."""
    return offline_home


WS_PATH = "/ws/dashboard/"


@pytest.fixture
def redis_db() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
async def layer(redis_db: redis.Redis, services_home: Any, on_postgres: None) -> AsyncIterator[Any]:
    """The configured layer, fresh for this test's event loop (its pools are per loop)."""
    channel_layers.backends.pop("default", None)
    channel_layer = get_channel_layer()
    assert isinstance(channel_layer, RedisChannelLayer)
    yield channel_layer
    await channel_layer.flush()
    await channel_layer.close_pools()
    channel_layers.backends.pop("default", None)


@pytest.fixture
def app_token(services_home: Any, on_postgres: None) -> tuple[int, str]:
    app, token = app_create(name=f"ws-{secrets.token_hex(3)}")
    return app.pk, token


async def connect(token: str) -> WebsocketCommunicator:
    headers = [
        (b"origin", b"http://localhost:8000"),
        (b"host", b"localhost"),
        (b"authorization", f"Bearer {token}".encode()),
    ]
    comm = WebsocketCommunicator(application, WS_PATH, headers=headers)
    connected, detail = await comm.connect(timeout=10)
    assert connected, detail
    hello = await comm.receive_json_from(timeout=10)
    assert hello == {"type": "hello", "data": {"scope": "app"}}
    return comm
