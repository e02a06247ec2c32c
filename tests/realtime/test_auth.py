"""Who may open ``/ws/dashboard/``: a dashboard user by session cookie, an app by bearer
header or by the subprotocol pair ``["bearer", token]``; foreign origins are refused at
the handshake; everyone else is accepted and closed with 4401 so a browser can read why.
The token never reaches a log line."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from tests.realtime.conftest import (
    CLOSE_UNAUTHENTICATED,
    EVIL_ORIGIN,
    Caller,
    frames_until,
    greeted,
    hello,
    is_summary,
    origin,
    socket,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("layer")]


async def assert_closed_unauthenticated(comm, connected) -> None:
    assert connected is True  # accepted first, so the client can read the close code
    output = await comm.receive_output(timeout=5)
    assert output == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}


# --- who gets in ----------------------------------------------------------------------------


async def test_a_dashboard_user_joins_with_the_session_cookie(dashboard: Caller):
    async with socket(dashboard.headers) as (comm, connected, subprotocol):
        assert connected is True
        assert subprotocol is None
        assert await hello(comm) == {"type": "hello", "data": {"scope": "dashboard"}}
        await comm.send_json_to({"type": "ping"})
        assert await comm.receive_json_from(timeout=5) == {"type": "pong", "data": {}}


async def test_an_app_joins_with_the_bearer_header(alice: Caller):
    async with socket(alice.headers) as (comm, connected, subprotocol):
        assert connected is True
        assert subprotocol is None
        assert await hello(comm) == {"type": "hello", "data": {"scope": "app"}}


async def test_an_app_joins_with_the_bearer_subprotocol_and_the_server_echoes_bearer(
    alice: Caller,
):
    async with socket(origin(), subprotocols=["bearer", alice.token]) as (
        comm,
        connected,
        subprotocol,
    ):
        assert connected is True
        assert subprotocol == "bearer"  # browsers drop a socket whose subprotocol is not echoed
        assert await hello(comm) == {"type": "hello", "data": {"scope": "app"}}


async def test_a_client_without_origin_may_use_the_bearer_header(alice: Caller):
    headers = [(b"host", b"localhost"), (b"authorization", f"Bearer {alice.token}".encode())]
    async with socket(headers) as (comm, connected, _):
        assert connected is True
        assert (await hello(comm))["data"]["scope"] == "app"


async def test_the_subprotocol_socket_receives_its_frames(alice: Caller):
    slot = await alice.create_slot("alice-sub")
    async with greeted(origin(), subprotocols=["bearer", alice.token]) as comm:
        await alice.drive_turn(slot)
        frames = await frames_until(comm, is_summary(slot))
        assert frames[0] == {
            "type": "turn",
            "data": {"key": slot, "running": True, "stop_reason": ""},
        }


@pytest.mark.parametrize(
    "message",
    [
        {"text_data": "not json"},
        {"text_data": "[1, 2]"},
        {"text_data": '{"type": "nope"}'},
        {"bytes_data": b"\x00\x01"},
        {"text_data": "{" * 5000},
        {"text_data": "[" * 100_000},  # nesting deep enough for a RecursionError
    ],
)
async def test_a_malformed_client_message_is_ignored_and_the_socket_stays_open(
    alice: Caller, message: dict[str, Any]
):
    async with greeted(alice.headers) as comm:
        await comm.send_to(**message)
        assert await comm.receive_nothing(timeout=0.1)
        await comm.send_json_to({"type": "ping"})
        assert await comm.receive_json_from(timeout=5) == {"type": "pong", "data": {}}


# --- foreign origins ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_origin",
    [EVIL_ORIGIN, "http://localhost.evil.example", "null", "file://", "http://127.0.0.2:8000"],
)
async def test_a_foreign_origin_is_refused_at_the_handshake_even_with_a_valid_cookie(
    dashboard: Caller, bad_origin: str
):
    cookie = next(value for name, value in dashboard.headers if name == b"cookie")
    headers = [*origin(bad_origin), (b"cookie", cookie)]
    async with socket(headers) as (comm, connected, _):
        assert connected is False  # daphne answers the upgrade with 403
        assert await comm.receive_nothing(timeout=0.1)


async def test_a_foreign_origin_is_refused_for_a_bearer_header(alice: Caller):
    headers = [*origin(EVIL_ORIGIN), (b"authorization", f"Bearer {alice.token}".encode())]
    async with socket(headers) as (_, connected, _):
        assert connected is False


async def test_a_foreign_origin_is_refused_for_the_bearer_subprotocol(alice: Caller):
    async with socket(origin(EVIL_ORIGIN), subprotocols=["bearer", alice.token]) as (
        _,
        connected,
        _,
    ):
        assert connected is False


async def test_a_session_cookie_without_origin_is_refused(dashboard: Caller):
    """Browsers always send Origin; only non-browser clients (bearer) may omit it."""
    cookie = next(value for name, value in dashboard.headers if name == b"cookie")
    async with socket([(b"host", b"localhost"), (b"cookie", cookie)]) as (_, connected, _):
        assert connected is False


@pytest.mark.parametrize("allowed", ["http://localhost:8000", "http://127.0.0.1:8000"])
async def test_an_allowed_origin_is_accepted(dashboard: Caller, allowed: str):
    cookie = next(value for name, value in dashboard.headers if name == b"cookie")
    async with greeted([*origin(allowed), (b"cookie", cookie)]):
        pass  # accepted, and greeted with a hello frame


# --- everyone else: accepted, then closed with 4401 -----------------------------------------


async def test_no_credentials_are_closed_with_4401(realtime):
    async with socket(origin()) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)


async def test_an_anonymous_session_cookie_is_closed_with_4401(realtime):
    headers = [*origin(), (b"cookie", b"sessionid=not-a-real-session-key")]
    async with socket(headers) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)


async def test_an_inactive_users_session_is_closed_with_4401(dashboard: Caller):
    await get_user_model().objects.filter(username="dash").aupdate(is_active=False)
    async with socket(dashboard.headers) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer kc_not-a-real-token",
        "Bearer not-even-the-prefix",
        "Bearer ",
        "Bearer " + "kc_" + "x" * 600,
        "Basic dXNlcjpwYXNz",
    ],
)
async def test_an_invalid_bearer_header_is_closed_with_4401(alice: Caller, authorization: str):
    headers = [*origin(), (b"authorization", authorization.encode())]
    async with socket(headers) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)


async def test_an_invalid_subprotocol_token_is_closed_with_4401(alice: Caller):
    async with socket(origin(), subprotocols=["bearer", "kc_forged"]) as (
        comm,
        connected,
        subprotocol,
    ):
        assert subprotocol == "bearer"
        await assert_closed_unauthenticated(comm, connected)


async def test_an_invalid_token_does_not_fall_back_to_the_session(dashboard: Caller):
    """Presented credentials that fail are a failure, not an anonymous-looking retry."""
    headers = [*dashboard.headers, (b"authorization", b"Bearer kc_forged")]
    async with socket(headers) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)


async def test_a_closed_socket_joined_no_group(alice: Caller, layer):
    slot = await alice.create_slot("alice-a")
    async with socket([*origin(), (b"authorization", b"Bearer kc_forged")]) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)
        assert not any(layer.groups.values())
        await alice.drive_turn(slot)
        assert await comm.receive_nothing(timeout=0.2)


# --- the token never reaches a log ----------------------------------------------------------


async def test_the_token_never_appears_in_logs(
    alice: Caller, dashboard: Caller, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    slot = await alice.create_slot("alice-logged")
    async with greeted(alice.headers) as comm:
        await alice.drive_turn(slot)
        await frames_until(comm, is_summary(slot))
    async with greeted(origin(), subprotocols=["bearer", alice.token]):
        pass  # accepted: the token travels in Sec-WebSocket-Protocol this time
    forged = alice.token[:-4] + "zzzz"
    async with socket(origin(), subprotocols=["bearer", forged]) as (comm, connected, _):
        await assert_closed_unauthenticated(comm, connected)
    headers = [*origin(EVIL_ORIGIN), (b"authorization", f"Bearer {alice.token}".encode())]
    async with socket(headers) as (_, connected, _):
        assert connected is False

    assert caplog.records, "nothing was logged at all: the check would prove nothing"
    for secret in (alice.token, forged, alice.token[3:]):
        assert secret not in caplog.text
        for record in caplog.records:
            assert secret not in record.getMessage()
            assert secret not in repr(record.args)
            assert secret not in (record.exc_text or "")
