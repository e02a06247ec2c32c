"""The dashboard socket (``/ws/dashboard/``): a session user (same-origin) joins
``dashboard``, an app (bearer token: header or ``bearer`` subprotocol) its ``app-<id>``.
A revoked credential closes it with 4401; before a frame it re-validates every
``REVALIDATE_SECONDS`` (an expired session, a lost message, a token changed by hand).
The Origin rule is Django's CSRF origin check on the handshake, so a cross-site page
cannot ride the session cookie; non-browser (bearer) clients may omit Origin.
"""

from __future__ import annotations

import asyncio
import json
import logging
from importlib import import_module
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from channels.auth import get_user
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.urls import path

from transcripts.services import app_authenticate

from .frames import (
    HelloData,
    HelloFrame,
    PongFrame,
    auth_accepted,
    frame_validate,
    session_tag,
)
from .groups import DASHBOARD_GROUP, app_group, group_sees_slot

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401  # documented in README: no session and no valid app token
CLOSE_FORBIDDEN_ORIGIN = 4403
# At most this long between two checks of a socket's credential, counted when a frame is
# due: a query per frame would cost a thread hop per socket under an import's bursts.
REVALIDATE_SECONDS = 5.0


SEEN_SLOTS_MAX = 256  # slots a socket remembers it may see, between credential checks
_group_sees_slot = sync_to_async(group_sees_slot)
_app_for_token = sync_to_async(app_authenticate)


def header(scope: Any, name: bytes) -> str | None:
    return next((str(v.decode("latin1")) for k, v in scope.get("headers", []) if k == name), None)


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
    """What ``request.is_secure()`` says for this handshake."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        meta_name, secure_value = proxy
        name = meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        sent = header(scope, name)
        if sent is not None:
            return bool(sent.split(",", 1)[0].strip() == secure_value)
    return str(scope.get("scheme", "ws")) in {"wss", "https"}


def _own_origin(scope: Any) -> Origin | None:
    """The handshake's own origin, as Django's CSRF check builds it from the request."""
    host = header(scope, b"host")
    if settings.USE_X_FORWARDED_HOST:
        host = header(scope, b"x-forwarded-host") or host
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
    """The Origin must be the handshake's own (scheme, host and port) or a trusted one."""
    value = header(scope, b"origin")
    if value is None:
        return True
    origin = _parse_origin(value)
    if origin is None:
        return False
    return origin == _own_origin(scope) or _trusted(origin)


class DashboardConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None  # the one group joined: its frames and its revocations
    app_id: int | None = None  # an app socket: its app and the token it connected with
    token: str = ""
    session_key: str = ""  # a session socket: its login session and user (str(pk))
    user_id: str = ""
    checked_at = 0.0  # the event loop's clock at the last credential check
    revoked = False
    seen_slots: set[str]  # slots this socket's group was found to see (cleared at each check)
    dropped = False  # a frame was dropped already: logged once per socket, not per frame

    async def connect(self) -> None:
        self.seen_slots = set()
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
        session = self.scope.get("session")
        if token:
            app = await _app_for_token(token=token)
            if app is not None:
                self.group, self.app_id, self.token = app_group(app.pk), app.pk, token
        elif user is not None and user.is_authenticated and session and session.session_key:
            if header(self.scope, b"origin") is None:
                # A browser always sends Origin: a session socket without one is refused.
                await self.close(code=CLOSE_FORBIDDEN_ORIGIN)
                return
            self.group = DASHBOARD_GROUP
            self.session_key, self.user_id = session.session_key, str(user.pk)
        await self.accept(subprotocol=subprotocol)
        if self.group is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.checked_at = asyncio.get_running_loop().time()
        scope: Literal["dashboard", "app"] = "dashboard" if self.group == DASHBOARD_GROUP else "app"
        await self.send_json(HelloFrame(data=HelloData(scope=scope)).wire())

    async def disconnect(self, code: int) -> None:
        group, self.group = self.group, None
        if group is not None:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def _credential_holds(self) -> bool:
        self.checked_at = asyncio.get_running_loop().time()
        self.seen_slots.clear()  # a slot moved to another app stops reaching this one
        if self.app_id is not None:
            app = await _app_for_token(token=self.token)
            return app is not None and app.pk == self.app_id
        # Read afresh (the scope's session caches what it read at connect); AnonymousUser
        # once it is gone or stale. get_user reads only the session of the scope it is given.
        store = import_module(settings.SESSION_ENGINE).SessionStore(self.session_key)
        user = await get_user(cast(Any, {"session": store}))
        return bool(user.is_authenticated and str(user.pk) == self.user_id)

    async def _revoke(self) -> None:
        # Out of its group first, so no frame already on its way is relayed after the close.
        self.revoked = True
        await self.disconnect(CLOSE_UNAUTHENTICATED)
        await self.close(code=CLOSE_UNAUTHENTICATED)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """Clients only ping: a binary or non-JSON message is ignored, never a crash (1011)."""
        try:
            content = json.loads(text_data) if text_data else None
        except (ValueError, RecursionError):
            return
        if not self.revoked and isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json(PongFrame().wire())

    async def frame_send(self, event: dict[str, Any]) -> None:
        if self.revoked or self.group is None:
            return
        due = asyncio.get_running_loop().time() - self.checked_at >= REVALIDATE_SECONDS
        if due and not await self._credential_holds():
            await self._revoke()
            return
        frame = await self._frame_for_me(event.get("frame"), self.group)
        if frame is not None:
            await self.send_json(frame)

    async def _frame_for_me(self, frame: object, group: str) -> dict[str, Any] | None:
        """The frame to relay, or None. Checked whatever layer delivered it: whoever can
        write to Redis can send any message to any group."""
        try:
            wire = frame_validate(frame)
        except ValueError as exc:
            self._dropped("a malformed frame", str(exc)[:200])
            return None
        data = wire.get("data")  # every group frame names its slot
        slot = data.get("key") if isinstance(data, dict) else None
        if not isinstance(slot, str):
            self._dropped("a frame naming no slot", str(wire.get("type")))
            return None
        if group != DASHBOARD_GROUP and slot not in self.seen_slots:
            if not await _group_sees_slot(group, slot):
                self._dropped("a frame about another group's slot", slot[:80])
                return None
            if len(self.seen_slots) >= SEEN_SLOTS_MAX:
                self.seen_slots.clear()
            self.seen_slots.add(slot)
        return wire

    def _dropped(self, what: str, detail: str) -> None:
        # Once per socket: a flood of forged messages must not become a flood of log lines.
        level = logging.DEBUG if self.dropped else logging.WARNING
        self.dropped = True
        log.log(level, "socket in %s dropped %s: %r", self.group, what, detail)

    def _named(self, event: dict[str, Any]) -> bool:
        """Whether a revocation names this socket's login session, user or app (a malformed
        one concerns no one)."""
        if self.revoked or self.group is None:
            return False
        try:
            names = auth_accepted(event)
        except ValueError as exc:
            self._dropped("a revocation naming no credential", str(exc)[:200])
            return False
        if "session" in names:
            return bool(self.session_key) and names["session"] == session_tag(self.session_key)
        if "user" in names:
            return bool(self.user_id) and names["user"] == self.user_id
        return self.app_id is not None and names.get("app") == str(self.app_id)

    async def auth_revoked(self, event: dict[str, Any]) -> None:
        if self._named(event):
            await self._revoke()

    async def auth_recheck(self, event: dict[str, Any]) -> None:
        if self._named(event) and not await self._credential_holds():
            await self._revoke()


websocket_urlpatterns = [
    path("ws/dashboard/", DashboardConsumer.as_asgi()),  # type: ignore[arg-type]
]
