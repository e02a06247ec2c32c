"""Fixtures for the dashboard WebSocket: the full ASGI application (middleware, routing,
consumer) over ``WebsocketCommunicator``, the in-memory channel layer, eager summary
passes, two apps and a logged-in dashboard user, and a Django test ``Client`` per caller
that drives turns through the real API.

The tests are async and use ``django_db(transaction=True)``: the consumer's ORM work
runs in asgiref's worker thread on another connection, so rows must be committed to be
seen (and the pushes under test only happen after a commit).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.test import Client
from pydantic import Field, TypeAdapter

from kirocrew_site.asgi import application
from kirocrew_site.realtime.frames import (
    NotificationFrame,
    RowFrame,
    SessionSummaryFrame,
    TurnFrame,
)
from tests.fixtures.personas import app_with_client, dashboard_client
from transcripts.models import App
from transcripts.services import session_create

WS_PATH = "/ws/dashboard/"
GOOD_ORIGIN = "http://localhost:8000"
EVIL_ORIGIN = "https://evil.example"
CLOSE_UNAUTHENTICATED = 4401

AnyFrame = Annotated[
    SessionSummaryFrame | TurnFrame | RowFrame | NotificationFrame,
    Field(discriminator="type"),
]
FRAMES: TypeAdapter[Any] = TypeAdapter(AnyFrame)


def validate_frame(frame: dict[str, Any]) -> Any:
    """The typed frame; asserts it survives a JSON round trip unchanged (the Redis layer
    msgpacks what the in-memory layer merely deep-copies)."""
    assert json.loads(json.dumps(frame)) == frame
    model = FRAMES.validate_python(frame)
    assert model.model_dump() == frame
    return model


@dataclass
class Caller:
    """One caller: its WebSocket handshake headers and a Client for the HTTP API."""

    name: str
    client: Client
    headers: list[tuple[bytes, bytes]]
    app: App | None = None
    token: str = ""  # an app's bearer token ("" for the dashboard user)

    async def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        def call() -> tuple[int, Any]:
            data = json.dumps(body) if body is not None else ""
            response = self.client.generic(method, path, data, content_type="application/json")
            content = response.content
            return response.status_code, json.loads(content) if content else None

        return await sync_to_async(call)()

    async def create_slot(self, name: str) -> str:
        status, body = await self.api("POST", "/api/chat/slots", {"name": name})
        assert status == 201, body
        return name

    async def add_row(self, slot: str, content: str) -> None:
        """One assistant row through the API (outside a turn unless one is running)."""
        status, body = await self.api(
            "POST", f"/api/chat/slots/{slot}/rows", {"role": "assistant", "content": content}
        )
        assert status == 201, body

    async def drive_turn(self, slot: str, *, ask: str = "", answer: str = "") -> None:
        """One clean turn through the API: start with a user row, one assistant row, end."""
        ask = ask or f"Please add a CSV export button to the {slot} report page."
        answer = answer or "Added the CSV export button; the export test passes."
        base = f"/api/chat/slots/{slot}"
        status, body = await self.api("POST", f"{base}/turns", {"content": ask})
        assert status == 201, body
        await self.add_row(slot, answer)
        status, body = await self.api("POST", f"{base}/turns/end", {"stop_reason": "end_turn"})
        assert status == 200, body


def origin(value: str = GOOD_ORIGIN) -> list[tuple[bytes, bytes]]:
    return [(b"origin", value.encode()), (b"host", b"localhost")]


@asynccontextmanager
async def socket(
    headers: Iterable[tuple[bytes, bytes]] = (),
    subprotocols: list[str] | None = None,
) -> AsyncIterator[tuple[WebsocketCommunicator, bool, Any]]:
    """Open ``/ws/dashboard/`` on the real application; always disconnect afterwards."""
    comm = WebsocketCommunicator(
        application, WS_PATH, headers=list(headers), subprotocols=subprotocols
    )
    connected, detail = await comm.connect(timeout=5)
    try:
        yield comm, connected, detail
    finally:
        await comm.disconnect()


async def hello(comm: WebsocketCommunicator) -> dict[str, Any]:
    frame = await comm.receive_json_from(timeout=5)
    assert frame["type"] == "hello", frame
    return frame  # type: ignore[no-any-return]


@asynccontextmanager
async def greeted(
    headers: Iterable[tuple[bytes, bytes]] = (),
    subprotocols: list[str] | None = None,
) -> AsyncIterator[WebsocketCommunicator]:
    """An accepted socket whose ``hello`` frame has been read (see ``socket``)."""
    async with socket(headers, subprotocols) as (comm, connected, detail):
        assert connected is True, detail
        await hello(comm)
        yield comm


async def frames_until(
    comm: WebsocketCommunicator, done: Callable[[dict[str, Any]], bool], *, within: float = 5
) -> list[dict[str, Any]]:
    """Every frame up to and including the first for which ``done`` holds (bounded)."""
    seen: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"no matching frame within {within}s; saw {seen}")
        frame = await comm.receive_json_from(timeout=remaining)
        seen.append(frame)
        if done(frame):
            return seen


def is_summary(slot: str) -> Callable[[dict[str, Any]], bool]:
    return lambda f: f.get("type") == "session_summary" and f["data"]["key"] == slot


def is_notification(slot: str) -> Callable[[dict[str, Any]], bool]:
    return lambda f: f.get("type") == "notification" and f["data"]["key"] == slot


@pytest.fixture
def realtime(
    offline_home: Path,
    summaries_on_via_env: None,
    eager_tasks: None,
    settings: Any,
    transactional_db: None,
) -> None:
    """Summaries on (one turn is enough), the offline summarizer, eager tasks and the
    in-memory layer, whatever the developer's shell says."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture
async def layer(realtime: None) -> AsyncIterator[Any]:
    """A fresh in-memory layer for this test's event loop."""
    channel_layer = get_channel_layer()
    assert isinstance(channel_layer, InMemoryChannelLayer)
    await channel_layer.flush()
    yield channel_layer
    await channel_layer.flush()


def _app_caller(name: str) -> Caller:
    app, token, client = app_with_client(name)
    headers = [*origin(), (b"authorization", f"Bearer {token}".encode())]
    return Caller(name=name, client=client, headers=headers, app=app, token=token)


@pytest.fixture
def alice(realtime: None) -> Caller:
    return _app_caller("alice")


@pytest.fixture
def bob(realtime: None) -> Caller:
    return _app_caller("bob")


@pytest.fixture
def dashboard(realtime: None) -> Caller:
    """A logged-in dashboard user: the handshake carries its session cookie."""
    client = dashboard_client()
    cookie_name = django_settings.SESSION_COOKIE_NAME
    session_id = client.cookies[cookie_name].value
    headers = [*origin(), (b"cookie", f"{cookie_name}={session_id}".encode())]
    return Caller(name="dashboard", client=client, headers=headers)


@pytest.fixture
def unscoped(realtime: None) -> str:
    """A slot no app owns (only the dashboard reaches it)."""
    return session_create(name="loose", app=None).name
