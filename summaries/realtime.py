"""The Channels side of the push seam: group sends after commit, and the dashboard socket.

Groups: ``dashboard`` (every logged-in dashboard user) and ``app-<id>`` (one app's
sockets, which receive frames only for that app's own slots).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import async_to_sync, sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.http.request import split_domain_port, validate_host

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


DEFAULT_PORTS = {"http": 80, "https": 443}
Origin = tuple[str, str, int]  # scheme, lowercased host, port (the default port filled in)


def _parse_origin(value: str) -> Origin | None:
    """``scheme://host[:port]`` and nothing else: userinfo, a path, a query or an unknown
    scheme make it no origin at all (a browser never sends one)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if (
        scheme not in DEFAULT_PORTS
        or "@" in parts.netloc
        or parts.path not in {"", "/"}
        or parts.query
        or parts.fragment
        or not parts.hostname
    ):
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def _is_secure(scope: Any) -> bool:
    """What ``request.is_secure()`` says for this handshake: the transport's scheme, or
    the proxy header named by ``SECURE_PROXY_SSL_HEADER`` when one is configured."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        meta_name, secure_value = proxy
        header = meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        sent = _header(scope, header)
        if sent is not None:
            return bool(sent.split(",", 1)[0].strip() == secure_value)
    return str(scope.get("scheme", "ws")) in {"wss", "https"}


def _own_origin(scope: Any) -> Origin | None:
    """The handshake's own origin, as Django's CSRF check builds it from the request:
    ws -> http, wss -> https, the Host header (which must be an allowed host)."""
    host = _header(scope, b"host")
    if settings.USE_X_FORWARDED_HOST:
        host = _header(scope, b"x-forwarded-host") or host
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    return _parse_origin(f"{'https' if _is_secure(scope) else 'http'}://{host}")


def _trusted(origin: Origin) -> bool:
    """``CSRF_TRUSTED_ORIGINS``: exact origins, or ``scheme://*.domain`` for subdomains."""
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        if "://*." in entry:
            entry_scheme, rest = entry.split("://*.", 1)
            wanted = _parse_origin(f"{entry_scheme}://{rest}")
            if (
                wanted is not None
                and (scheme, port) == (wanted[0], wanted[2])
                and host.endswith("." + wanted[1])
            ):
                return True
        elif _parse_origin(entry) == origin:
            return True
    return False


def origin_allowed(scope: Any) -> bool:
    """The rule of Django's CSRF origin check: the Origin must be the handshake's own
    origin (scheme, host and port) or a trusted one. Browsers always send Origin;
    non-browser clients (which authenticate with a bearer header) may omit it."""
    value = _header(scope, b"origin")
    if value is None:
        return True
    origin = _parse_origin(value)
    if origin is None:
        return False
    return origin == _own_origin(scope) or _trusted(origin)


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
