"""The socket's Origin rule is Django's CSRF origin rule: scheme, host and port must be the
handshake's own origin (ws -> http, wss -> https, the Host header, default ports filled in)
or one of ``CSRF_TRUSTED_ORIGINS``; an Origin with userinfo, a path or an odd scheme is
no origin at all. A refused handshake never joins a group, so it never sees a frame."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import pytest
from channels.testing import WebsocketCommunicator

from kirocrew_site.asgi import application
from kirocrew_site.realtime.consumer import CLOSE_FORBIDDEN_ORIGIN
from tests.realtime.conftest import WS_PATH, Caller, frames_until, hello, is_summary

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("layer")]

SITE = "kirocrew.test"


@pytest.fixture
def same_origin_only(settings: Any) -> None:
    """No trusted origins: only the handshake's own origin passes."""
    settings.ALLOWED_HOSTS = [SITE, "127.0.0.1", "localhost", "testserver"]
    settings.CSRF_TRUSTED_ORIGINS = []


def cookie_of(caller: Caller) -> bytes:
    return next(value for name, value in caller.headers if name == b"cookie")


@asynccontextmanager
async def handshake(
    caller: Caller, origin: str, host: str, scheme: str = "ws", **extra: str
) -> AsyncIterator[tuple[WebsocketCommunicator, bool, Any]]:
    """A session-cookie handshake with this Origin and Host over ``scheme``."""

    async def with_scheme(scope: Any, receive: Any, send: Any) -> Any:
        return await application(cast(Any, {**scope, "scheme": scheme}), receive, send)

    headers = [
        (b"origin", origin.encode()),
        (b"host", host.encode()),
        (b"cookie", cookie_of(caller)),
        *((name.replace("_", "-").encode(), value.encode()) for name, value in extra.items()),
    ]
    comm = WebsocketCommunicator(with_scheme, WS_PATH, headers=headers)
    connected, detail = await comm.connect(timeout=5)
    try:
        yield comm, connected, detail
    finally:
        await comm.disconnect()


async def assert_refused(caller: Caller, origin: str, host: str, scheme: str = "ws") -> None:
    async with handshake(caller, origin, host, scheme) as (_, connected, code):
        assert (connected, code) == (False, CLOSE_FORBIDDEN_ORIGIN), origin


# --- the finding's three variants, with the default trusted origins -------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:9999",  # right host, wrong port
        "https://127.0.0.1:1",  # right host, wrong scheme and port
        "http://evil@127.0.0.1",  # userinfo
        "http://evil@127.0.0.1:8000",  # userinfo before a trusted origin
        "http://user:pw@localhost:8000",
        "https://localhost:8000",  # a trusted origin's host and port, the other scheme
        "http://localhost:8000/path",  # not an origin
        "http://localhost:8000?x=1",
        "ftp://localhost:8000",
    ],
)
async def test_a_near_miss_origin_is_refused_with_a_valid_cookie(dashboard: Caller, origin: str):
    await assert_refused(dashboard, origin, host="127.0.0.1:8000")


# --- scheme, host and port against the handshake's own origin --------------------------------


@pytest.mark.usefixtures("same_origin_only")
@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        (f"http://{SITE}", SITE, "ws"),
        (f"http://{SITE}:80", SITE, "ws"),  # the default port, spelled out
        (f"http://{SITE}", f"{SITE}:80", "ws"),
        (f"HTTP://{SITE.upper()}", SITE, "ws"),  # scheme and host are case-insensitive
        (f"http://{SITE}:8000", f"{SITE}:8000", "ws"),
        (f"https://{SITE}", SITE, "wss"),
        (f"https://{SITE}:443", SITE, "wss"),
        (f"https://{SITE}:8443", f"{SITE}:8443", "wss"),
    ],
)
async def test_the_own_origin_is_accepted(dashboard: Caller, origin: str, host: str, scheme: str):
    async with handshake(dashboard, origin, host, scheme) as (comm, connected, detail):
        assert connected is True, detail
        assert (await hello(comm))["data"]["scope"] == "dashboard"


@pytest.mark.usefixtures("same_origin_only")
@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        (f"https://{SITE}", SITE, "ws"),  # a plain socket from an https page's origin
        (f"http://{SITE}", SITE, "wss"),  # and the reverse
        (f"http://{SITE}:8001", f"{SITE}:8000", "ws"),  # another port on the same host
        (f"http://{SITE}:443", SITE, "wss"),
        (f"http://{SITE}:8000", SITE, "ws"),
        (f"http://evil@{SITE}", SITE, "ws"),
        (f"http://{SITE}.evil.example", SITE, "ws"),
        ("http://evil.example", "evil.example", "ws"),  # Host not in ALLOWED_HOSTS
        ("null", SITE, "ws"),
        (f"http://{SITE}:99999", SITE, "ws"),  # not a port
    ],
)
async def test_another_scheme_host_or_port_is_refused(
    dashboard: Caller, origin: str, host: str, scheme: str
):
    await assert_refused(dashboard, origin, host, scheme)


@pytest.mark.usefixtures("same_origin_only")
async def test_the_proxy_ssl_header_makes_the_handshake_secure(dashboard: Caller, settings: Any):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    origin = f"https://{SITE}"
    async with handshake(dashboard, origin, SITE, x_forwarded_proto="https") as (_, ok, _d):
        assert ok is True
    async with handshake(dashboard, origin, SITE, x_forwarded_proto="http") as (_, ok, code):
        assert (ok, code) == (False, CLOSE_FORBIDDEN_ORIGIN)


# --- CSRF_TRUSTED_ORIGINS ----------------------------------------------------------------


async def test_a_trusted_origin_is_accepted_for_another_host(dashboard: Caller, settings: Any):
    settings.CSRF_TRUSTED_ORIGINS = ["https://dash.example.org", "https://*.corp.example"]
    for origin in [
        "https://dash.example.org",
        "https://dash.example.org:443",
        "https://a.corp.example",
    ]:
        async with handshake(dashboard, origin, "127.0.0.1:8000") as (_, connected, detail):
            assert connected is True, (origin, detail)
    for origin in [
        "http://dash.example.org",
        "https://dash.example.org:8443",
        "https://corp.example.evil",
    ]:
        await assert_refused(dashboard, origin, "127.0.0.1:8000")


# --- the accepted socket still gets its frames; a refused one none --------------------------


@pytest.mark.usefixtures("same_origin_only")
async def test_the_same_origin_socket_receives_frames_and_a_refused_one_joins_no_group(
    dashboard: Caller, alice: Caller, layer: Any
):
    slot = await alice.create_slot("origin-frames")
    await assert_refused(dashboard, f"http://{SITE}:9999", f"{SITE}:8000")
    assert not any(layer.groups.values())
    async with handshake(dashboard, f"http://{SITE}:8000", f"{SITE}:8000") as (comm, ok, _d):
        assert ok is True
        await hello(comm)
        assert [len(members) for members in layer.groups.values()] == [1]
        await alice.drive_turn(slot)
        frames = await frames_until(comm, is_summary(slot))
        assert frames[0]["type"] == "turn"
