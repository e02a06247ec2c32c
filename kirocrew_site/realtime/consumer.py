"""The dashboard socket (``/ws/dashboard/``): authenticate, join one group, relay frames.

A dashboard user (session cookie, same-origin) joins ``dashboard``; an app (bearer token,
in the Authorization header or the ``bearer`` subprotocol) joins its own ``app-<id>``.
What reaches a group is decided by ``services.frame_send``; this consumer only relays.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .frames import HelloData, HelloFrame, PongFrame
from .groups import DASHBOARD_GROUP, app_group
from .origin import header, origin_allowed

CLOSE_UNAUTHENTICATED = 4401  # documented in README: no session and no valid app token
CLOSE_FORBIDDEN_ORIGIN = 4403


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
        auth = header(self.scope, b"authorization")
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
            if header(self.scope, b"origin") is None:
                # A browser always sends Origin: a session socket without one is refused.
                await self.close(code=CLOSE_FORBIDDEN_ORIGIN)
                return
            self.group = DASHBOARD_GROUP
        await self.accept(subprotocol=subprotocol)
        if self.group is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        scope: Literal["dashboard", "app"] = "dashboard" if self.group == DASHBOARD_GROUP else "app"
        await self.send_json(HelloFrame(data=HelloData(scope=scope)).wire())

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
            await self.send_json(PongFrame().wire())

    async def frame_send(self, event: dict[str, Any]) -> None:
        await self.send_json(event["frame"])
