"""The Channels side of the push seam: group sends after commit, and the dashboard socket.

Groups: ``dashboard`` (every logged-in dashboard user) and ``app-<id>`` (one app's
sockets, which receive frames only for that app's own slots).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlparse

from asgiref.sync import async_to_sync, sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.http.request import validate_host

from transcripts.models import Slot

from .frames import SessionSummaryFrame, SlotRef

log = logging.getLogger(__name__)

DASHBOARD_GROUP = "dashboard"
CLOSE_UNAUTHENTICATED = 4401  # documented in README: no session and no valid app token
CLOSE_FORBIDDEN_ORIGIN = 4403


def app_group(app_id: int) -> str:
    return f"app-{app_id}"


def _groups_for(slot_name: str) -> list[str]:
    app_id = Slot.objects.filter(name=slot_name).values_list("app_id", flat=True).first()
    groups = [DASHBOARD_GROUP]
    if app_id is not None:
        groups.append(app_group(app_id))
    return groups


def send_frame(slot_name: str, frame: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    groups = _groups_for(slot_name)

    async def fan_out() -> None:  # one loop hop for every group, not one per group
        for group in groups:
            await layer.group_send(group, {"type": "frame.send", "frame": frame})

    async_to_sync(fan_out)()


def send_session_summary(slot_name: str) -> None:
    send_frame(slot_name, SessionSummaryFrame(data=SlotRef(key=slot_name)).wire())


def _header(scope: Any, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin1"))
    return None


def origin_allowed(scope: Any) -> bool:
    """Browsers always send Origin: it must name an allowed host. Non-browser clients
    (which authenticate with a bearer header) may omit it."""
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    host = urlparse(origin).hostname or ""
    return bool(host) and validate_host(host, settings.ALLOWED_HOSTS)


@sync_to_async
def _app_for_token(token: str) -> Any:
    from transcripts.services import app_authenticate

    return app_authenticate(token=token)


class DashboardConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        if not origin_allowed(self.scope):
            await self.close(code=CLOSE_FORBIDDEN_ORIGIN)
            return
        subprotocol = None
        token = None
        auth = _header(self.scope, b"authorization")
        if auth and auth.lower().startswith("bearer "):
            token = auth[7:].strip()
        protocols = list(self.scope.get("subprotocols") or [])
        if len(protocols) == 2 and protocols[0] == "bearer":
            token, subprotocol = protocols[1], "bearer"
        user = self.scope.get("user")
        if token:
            app = await _app_for_token(token)
            self.group = app_group(app.pk) if app is not None else None
        elif user is not None and user.is_authenticated:
            if _header(self.scope, b"origin") is None:
                # A browser always sends Origin: a session socket without one is refused.
                await self.close(code=CLOSE_FORBIDDEN_ORIGIN)
                return
            self.group = DASHBOARD_GROUP
        await self.accept(subprotocol=subprotocol)
        if self.group is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send_json(
            {
                "type": "hello",
                "data": {"scope": "dashboard" if self.group == DASHBOARD_GROUP else "app"},
            }
        )

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """Clients only ping: a binary or non-JSON message is ignored, never a crash (1011)."""
        try:
            content = json.loads(text_data) if text_data else None
        except (ValueError, RecursionError):
            return
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong", "data": {}})

    async def frame_send(self, event: dict[str, Any]) -> None:
        await self.send_json(event["frame"])
