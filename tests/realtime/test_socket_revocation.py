"""A socket is authenticated once, at connect; revoking what it was opened with closes it.

From the stop-20 attack pass (holes 8a and 8b, closed): a rotated app token and a logout.
Then what else revokes a credential: a deleted login session, a changed password, a
deactivated or deleted user; and the consumer's periodic re-validation for what nothing
announces (an expired session, a token changed behind the services' back). Each closes
with 4401 and relays nothing after; sockets of other credentials are untouched.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session as LoginSession
from django.test import Client
from django.utils import timezone

from kirocrew_site.realtime import consumer
from kirocrew_site.realtime.frames import TurnData, TurnFrame
from kirocrew_site.realtime.receivers import frame_send
from tests.fixtures.personas import app_with_client, dashboard_client, logged_in
from tests.realtime.conftest import (
    CLOSE_UNAUTHENTICATED,
    Caller,
    frames_until,
    greeted,
    is_notification,
    origin,
    socket,
)
from transcripts.models import App
from transcripts.services import app_token_rotate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("layer")]
CLOSED = {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}


def cookie_headers(browser: Client) -> list[tuple[bytes, bytes]]:
    name = django_settings.SESSION_COOKIE_NAME
    return [*origin(), (b"cookie", f"{name}={browser.cookies[name].value}".encode())]


async def one_turn(comm: WebsocketCommunicator, runner: Caller, slot: str, ask: str = "") -> None:
    """Drive a turn and read the socket's frames up to its notification (it is live)."""
    await runner.drive_turn(slot, ask=ask)
    await frames_until(comm, is_notification(slot))


async def assert_closed_then_deaf(comm: WebsocketCommunicator, runner: Caller, slot: str) -> None:
    """The next output is the 4401 close; a later turn's frames never follow it."""
    assert await comm.receive_output(timeout=5) == CLOSED
    await runner.drive_turn(slot, ask="Now please also export the totals row.")
    assert await comm.receive_nothing(timeout=0.5)


# --- 8a. a rotated app token ----------------------------------------------------------------


async def test_a_socket_stops_receiving_once_its_token_is_rotated(alice: Caller, bob: Caller):
    slot = await alice.create_slot("rot-1")
    other = await bob.create_slot("rot-other")
    async with greeted(alice.headers) as comm, greeted(bob.headers) as bystander:
        await one_turn(comm, alice, slot)
        # The token is revoked: the HTTP API refuses it from now on ...
        _, new_token = await sync_to_async(app_token_rotate)(name="alice")
        status, _ = await alice.api("GET", "/api/health")
        assert status == 401
        # ... the socket opened with it is closed, and the app's next turn (with its new
        # token) does not reach it.
        renewed = Caller(
            name="alice",
            client=Client(HTTP_AUTHORIZATION=f"Bearer {new_token}"),
            headers=[*origin(), (b"authorization", f"Bearer {new_token}".encode())],
            app=alice.app,
            token=new_token,
        )
        await assert_closed_then_deaf(comm, renewed, slot)
        # Another app's socket is untouched; a socket with the new token is served.
        await one_turn(bystander, bob, other)
        async with greeted(renewed.headers) as fresh:
            await one_turn(fresh, renewed, slot)


async def test_the_subprotocol_socket_is_closed_by_a_rotation_too(alice: Caller):
    slot = await alice.create_slot("rot-sub")
    async with greeted(origin(), subprotocols=["bearer", alice.token]) as comm:
        await one_turn(comm, alice, slot)
        await sync_to_async(app_token_rotate)(name="alice")
        assert await comm.receive_output(timeout=5) == CLOSED
        assert await comm.receive_nothing(timeout=0.2)


async def test_a_rotated_token_cannot_open_a_socket(realtime: None) -> None:
    app, token, _ = await sync_to_async(app_with_client)("rot-app-2")
    await sync_to_async(app_token_rotate)(name="rot-app-2")
    async with socket([(b"authorization", f"Bearer {token}".encode())]) as (comm, _, _):
        assert await comm.receive_output(timeout=5) == CLOSED
    async with socket(subprotocols=["bearer", token]) as (comm, _, _):
        assert await comm.receive_output(timeout=5) == CLOSED
    assert await App.objects.filter(pk=app.pk).aexists()


# --- 8b. a logout, and everything else that revokes a login session -------------------------


async def test_a_dashboard_socket_stops_receiving_after_logout(alice: Caller) -> None:
    leaver = await sync_to_async(dashboard_client)("leaver")
    stayer = await sync_to_async(dashboard_client)("stayer")
    slot = await alice.create_slot("busy-1")
    async with greeted(cookie_headers(leaver)) as comm, greeted(cookie_headers(stayer)) as kept:
        await one_turn(comm, alice, slot)
        await frames_until(kept, is_notification(slot))
        logged_out = await sync_to_async(leaver.post)("/logout/")
        assert logged_out.status_code in {200, 302}
        assert (await sync_to_async(leaver.get)("/")).status_code == 302  # to the login
        await assert_closed_then_deaf(comm, alice, slot)
        # Another user's session, logged in all along, still receives every frame.
        await frames_until(kept, is_notification(slot))


async def test_every_socket_of_the_session_closes_and_no_other_sessions(alice: Caller):
    """Two tabs share one session; the same user's second browser has its own."""
    first = await sync_to_async(dashboard_client)("twice")
    user = await get_user_model().objects.aget(username="twice")
    second = await sync_to_async(logged_in)(user)
    slot = await alice.create_slot("tabs")
    async with (
        greeted(cookie_headers(first)) as tab1,
        greeted(cookie_headers(first)) as tab2,
        greeted(cookie_headers(second)) as other_browser,
    ):
        await sync_to_async(first.post)("/logout/")
        assert await tab1.receive_output(timeout=5) == CLOSED
        assert await tab2.receive_output(timeout=5) == CLOSED
        await one_turn(other_browser, alice, slot)


async def test_a_flushed_session_closes_its_socket(alice: Caller, dashboard: Caller):
    """A session deleted without a logout (the admin, ``clearsessions``, a flush)."""
    slot = await alice.create_slot("flushed")
    async with greeted(dashboard.headers) as comm:
        key = dashboard.client.cookies[django_settings.SESSION_COOKIE_NAME].value
        await LoginSession.objects.filter(session_key=key).adelete()
        await assert_closed_then_deaf(comm, alice, slot)


@pytest.mark.parametrize("change", ["password", "deactivated", "deleted"])
async def test_a_user_whose_credentials_changed_is_closed(
    alice: Caller, dashboard: Caller, change: str
):
    slot = await alice.create_slot(f"user-{change}")
    async with greeted(dashboard.headers) as comm:
        await one_turn(comm, alice, slot)

        def revoke() -> None:
            user = get_user_model().objects.get(username="dash")
            if change == "password":
                user.set_password("a-new-password-for-dash")  # rotates the session hash
                user.save()
            elif change == "deactivated":
                user.is_active = False
                user.save()
            else:
                user.delete()

        await sync_to_async(revoke)()
        await assert_closed_then_deaf(comm, alice, slot)


async def test_saving_a_user_without_revoking_anything_keeps_the_socket(
    alice: Caller, dashboard: Caller
):
    slot = await alice.create_slot("user-renamed")
    async with greeted(dashboard.headers) as comm:

        def rename() -> None:
            user = get_user_model().objects.get(username="dash")
            user.first_name = "Dash"
            user.save()  # a recheck, which the session passes

        await sync_to_async(rename)()
        await one_turn(comm, alice, slot)


# --- what nothing announces: re-validated before a frame, every REVALIDATE_SECONDS ----------


async def test_a_token_changed_behind_the_services_back_is_caught_before_a_frame(
    alice: Caller, bob: Caller, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(consumer, "REVALIDATE_SECONDS", 0.0)
    slot = await alice.create_slot("silent-app")
    other = await bob.create_slot("silent-bob")
    async with greeted(alice.headers) as comm, greeted(bob.headers) as bystander:
        await App.objects.filter(name="alice").aupdate(token_hash="0" * 64)  # no signal
        # alice's token writes nothing now: the frame comes from the one way frames leave.
        frame = TurnFrame(data=TurnData(key=slot, running=True))
        await sync_to_async(frame_send)(slot, frame)
        assert await comm.receive_output(timeout=5) == CLOSED
        assert await comm.receive_nothing(timeout=0.2)
        await one_turn(bystander, bob, other)  # re-validated on every frame, and served


async def test_an_expired_session_is_caught_before_a_frame(
    alice: Caller, dashboard: Caller, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(consumer, "REVALIDATE_SECONDS", 0.0)
    slot = await alice.create_slot("silent-session")
    async with greeted(dashboard.headers) as comm, greeted(alice.headers) as bystander:
        key = dashboard.client.cookies[django_settings.SESSION_COOKIE_NAME].value
        past = timezone.now() - timedelta(seconds=1)  # expired, its row still there
        await LoginSession.objects.filter(session_key=key).aupdate(expire_date=past)
        await alice.drive_turn(slot)
        assert await comm.receive_output(timeout=5) == CLOSED
        assert await comm.receive_nothing(timeout=0.2)
        await frames_until(bystander, is_notification(slot))


async def test_a_valid_socket_is_not_rechecked_before_the_interval(
    alice: Caller, dashboard: Caller, monkeypatch: pytest.MonkeyPatch
):
    """The default interval: a burst of frames costs no credential query per frame."""
    checks: list[str] = []
    real = consumer.DashboardConsumer._credential_holds

    async def counted(self: Any) -> bool:
        checks.append(self.group)
        return await real(self)

    monkeypatch.setattr(consumer.DashboardConsumer, "_credential_holds", counted)
    slot = await alice.create_slot("burst")
    async with greeted(dashboard.headers) as comm:
        for n in range(3):
            await one_turn(comm, alice, slot, ask=f"Please handle request number {n} now.")
    assert checks == []
