"""The relay in the server's process: started by the ASGI application on its first
connection, it sends spooled frames on the in-memory layer to the sockets, refuses what
is not a frame for a known group, and ``frame_spool`` writes only while a relay is alive.

The real application, layer and spool folder (``$KIROCREW_HOME/frames`` of the test).
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer, get_channel_layer

from kirocrew_site.realtime import relay
from kirocrew_site.realtime.core.spool import HEARTBEAT, SpoolWriter
from kirocrew_site.realtime.groups import DASHBOARD_GROUP, app_group
from tests.realtime.conftest import Caller, frames_until, greeted

pytestmark = pytest.mark.django_db(transaction=True)


def row(slot: str, ts: str) -> dict[str, Any]:
    return {"type": "row", "data": {"key": slot, "ts": ts, "role": "user"}}


async def relay_alive(folder: Path, within: float = 3.0) -> None:
    deadline = time.monotonic() + within
    while not (folder / HEARTBEAT).exists():
        assert time.monotonic() < deadline, "the relay never touched its heartbeat"
        await asyncio.sleep(0.05)


def frame_files(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if not name.startswith(".")]


async def test_spooled_frames_reach_the_groups_sockets_and_bad_files_are_dropped(
    layer: Any, alice: Caller, bob: Caller, dashboard: Caller, caplog: pytest.LogCaptureFixture
) -> None:
    assert alice.app is not None
    assert bob.app is not None
    await alice.create_slot("a1")  # a socket relays frames only about its own app's slots
    folder = relay.spool_folder()
    writer = SpoolWriter()
    async with (
        greeted(alice.headers) as a,
        greeted(bob.headers) as b,
        greeted(dashboard.headers) as d,
    ):
        await relay_alive(folder)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        (folder / "00000000000000000001-1-1.json").write_text("{not json")
        hello = {"type": "hello", "data": {"scope": "app"}}  # a socket's own frame: refused
        writer.write(folder, [([app_group(alice.app.pk)], [hello])])
        writer.write(folder, [(["user-1"], [row("a1", "t0")])])  # not a frame group: refused
        writer.write(folder, [([DASHBOARD_GROUP, app_group(alice.app.pk)], [row("a1", "t1")])])
        writer.write(
            folder,
            [([DASHBOARD_GROUP], [row("loose", "t2")]), ([DASHBOARD_GROUP], [row("loose", "t3")])],
        )

        assert await frames_until(a, lambda f: True, within=3) == [row("a1", "t1")]
        got = await frames_until(d, lambda f: f["data"]["ts"] == "t3", within=3)
        assert got == [row("a1", "t1"), row("loose", "t2"), row("loose", "t3")]
        assert await b.receive_nothing(timeout=0.5)  # another app's slot: not bob's
        assert await a.receive_nothing(timeout=0.1)
    assert frame_files(folder) == []
    dropped = [r.getMessage() for r in caplog.records if "malformed" in r.getMessage()]
    assert len(dropped) == 3, dropped


async def test_frame_spool_hands_frames_to_a_live_relay_and_the_server_sends_locally(
    layer: Any, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert alice.app is not None
    group = [app_group(alice.app.pk)]
    await alice.create_slot("a1")
    async with greeted(alice.headers) as a:
        assert relay._state.token  # the connection made this process the relay's
        assert not relay.frame_spool(layer, group, [row("a1", "t1")])
        await relay_alive(relay.spool_folder())
        # As a command's process sees it: no relay of its own, a fresh heartbeat.
        monkeypatch.setattr(relay._state, "token", "")
        assert relay.frame_spool(layer, group, [row("a1", "t2")])
        assert await frames_until(a, lambda f: True, within=3) == [row("a1", "t2")]


def test_without_a_live_relay_nothing_is_written(
    kirocrew_home: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    monkeypatch.setattr(relay._state, "token", "")  # a command's process: runs no relay
    layer = get_channel_layer()
    assert isinstance(layer, InMemoryChannelLayer)
    assert not relay.frame_spool(layer, [DASHBOARD_GROUP], [row("s", "t1")])
    folder = relay.spool_folder()
    assert not folder.exists()
    folder.mkdir(mode=0o700)
    (folder / HEARTBEAT).write_text("dead")
    past = time.time() - 10  # a server that died: its heartbeat went stale
    os.utime(folder / HEARTBEAT, (past, past))
    assert not relay.frame_spool(layer, [DASHBOARD_GROUP], [row("s", "t1")])
    assert frame_files(folder) == []


async def test_with_redis_no_relay_starts(settings: Any, kirocrew_home: Path) -> None:
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},  # never connected to
        }
    }
    task = relay._state.task
    relay.relay_ensure()
    assert relay._state.task is task
    assert not relay.frame_spool(get_channel_layer(), [DASHBOARD_GROUP], [row("s", "t")])  # type: ignore[arg-type]
    assert not (kirocrew_home / "frames").exists()


@pytest.mark.parametrize(
    ("group", "ok"),
    [
        ("dashboard", True),
        ("app-7", True),
        ("app-1234567890", True),
        ("app-07", False),
        ("app-", False),
        ("app-7 ", False),
        ("app-\u0663", False),  # an Arabic-Indic three: isdigit() holds, int() takes it
        ("app--1", False),
        ("user-1", False),
        ("auth-00ff", False),
        ("Dashboard", False),
    ],
)
def test_only_the_frame_groups_are_accepted(group: str, ok: bool) -> None:
    assert relay.group_accepted(group) is ok


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "hello", "data": {"scope": "app"}},
        {"type": "pong", "data": {}},
        {"type": "row", "data": {"key": "s", "ts": "t", "role": "user", "extra": 1}},
        {"type": "row", "data": {"key": "s"}},
        {"type": "turn", "data": {"key": "s", "running": "maybe"}},
        {"type": 3},
        {"type": ["auth.revoked"], "session": "0" * 32},
        {"type": {"a": 1}, "data": {"key": "s"}},
        {},
    ],
)
def test_only_known_well_formed_frames_are_accepted(frame: dict[str, Any]) -> None:
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        relay.frame_accepted(frame)


def test_every_frame_a_slot_group_receives_is_accepted_as_sent() -> None:
    for frame in (
        {"type": "row", "data": {"key": "s", "ts": "t", "role": "user"}},
        {"type": "turn", "data": {"key": "s", "running": False, "stop_reason": "end_turn"}},
        {"type": "session_summary", "data": {"key": "s"}},
        {"type": "notification", "data": {"key": "s", "title": "Summary updated", "ts": "t"}},
    ):
        assert relay.frame_accepted(frame) == frame


@pytest.mark.parametrize(
    "message",
    [
        {"type": "auth.revoked", "session": "zz"},
        {"type": "auth.revoked", "user": "1", "session": "0" * 32},
        {"type": "auth.recheck", "user": "-1"},
        {"type": "auth.recheck", "app": "x"},
        {"type": "auth.recheck"},  # names no one: would close every socket of its group
        {"type": "auth.revoked"},
    ],
)
def test_only_revocations_naming_one_credential_are_relayed(message: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="revocation"):
        relay.frame_accepted(message)


def test_a_revocation_naming_a_session_user_or_app_is_relayed_as_sent() -> None:
    for message in (
        {"type": "auth.revoked", "session": "0" * 32},
        {"type": "auth.revoked", "user": "7"},
        {"type": "auth.recheck", "app": "3"},
    ):
        assert relay.frame_accepted(message) == message
