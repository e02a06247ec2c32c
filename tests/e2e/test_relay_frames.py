"""Without Redis, a command in its own process still reaches a socket on the server.

The embedded profile (SQLite, the in-memory channel layer) with real processes: daphne,
a WebSocket client authenticated as an app, and ``import_transcripts --follow`` in
another process with the same ``KIROCREW_HOME``. Records appended to the followed file
become row frames in the command, which it spools to ``$KIROCREW_HOME/frames/``; daphne's
relay sends them on its own layer to the socket. No patching: this is ``make run`` plus a
second terminal.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from tests.e2e.processes import (
    BIN,
    Proc,
    append_prompt_and_tool_call,
    daphne_start,
    embedded_env,
    health,
    manage,
    nth_row,
    recv_until,
    wait_for,
)
from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, copy_tree

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

APP = "relay-frames"
SLOT = f"claude:{CLAUDE_SID}"  # an imported Claude Code session's slot is its key


def test_a_follow_import_reaches_a_socket_on_the_server_without_redis(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    home = tmp_path / "home"
    env = embedded_env(home, KIROCREW_SUMMARY_ENABLED="0")  # frames only: no pass queued
    spool = home / "frames"
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_app", APP).strip().splitlines()[-1]
    assert token.startswith("kc_")
    source = copy_tree(tmp_path / "src") / CLAUDE_FILE

    # With no server running, the import's frames go nowhere and leave no file behind.
    manage(env, "import_transcripts", "--format", "claude-code", "--app", APP, str(source))
    assert not spool.exists()

    daphne, port = daphne_start(env, logs)
    follow = [
        *(str(BIN / "python"), "manage.py", "import_transcripts", "--format", "claude-code"),
        *("--follow", "--interval", "0.1", "--polls", "600", str(source)),
    ]
    follower: Proc | None = None
    bearer = {"Authorization": f"Bearer {token}"}
    latencies: list[float] = []
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=30) as api:
            wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
            with ws_connect(
                f"ws://127.0.0.1:{port}/ws/dashboard/", additional_headers=bearer, open_timeout=10
            ) as ws:
                assert json.loads(ws.recv(timeout=10)) == {
                    "type": "hello",
                    "data": {"scope": "app"},
                }
                wait_for("the relay", (spool / ".relay").exists, within=10, procs=[daphne])
                assert stat.S_IMODE(spool.stat().st_mode) == 0o700

                follower = started = Proc("follow", follow, env, logs)
                wait_for(
                    "the follower",
                    lambda: "Following" in started.output(),
                    within=30,
                    procs=[daphne, started],
                )
                rows: list[dict[str, Any]] = []
                for n in (1, 2):  # the second append measures a warm follower
                    appended = time.monotonic()
                    append_prompt_and_tool_call(source, f"relay{n}")
                    seen = recv_until(ws, nth_row(1), within=20)
                    latencies.append(time.monotonic() - appended)
                    seen += recv_until(ws, nth_row(1), within=20)
                    rows += [f for f in seen if f["type"] == "row"]

            response = api.get(f"/api/chat/slots/{SLOT}/transcript")
            assert response.status_code == 200, response.text
            stored = response.json()["rows"][-4:]
    finally:
        if follower is not None:
            follower.stop()
            print(f"--- follow\n{follower.output()[-4000:]}")
        daphne.stop()
        print(f"--- daphne\n{daphne.output()[-4000:]}")  # shown when the test failed
    print(f"append -> row frame: {', '.join(f'{s * 1000:.0f} ms' for s in latencies)}")

    # The frames name exactly the rows the follower appended, in order.
    assert rows == [
        {"type": "row", "data": {"key": SLOT, "ts": row["ts"], "role": row["role"]}}
        for row in stored
    ]
    assert [row["role"] for row in stored][::2] == ["user", "user"]
    # Every file was taken: at most the heartbeat is left (removed only at a clean exit).
    assert [name for name in os.listdir(spool) if name != ".relay"] == []


def test_a_rotation_in_a_terminal_closes_the_socket_without_redis(tmp_path: Path) -> None:
    """``create_app --rotate`` in its own process: its revocation rides the relay, so the
    socket opened with the old token closes at once, with no frame due (the consumer's own
    re-check runs only before relaying a frame)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    home = tmp_path / "home"
    env = embedded_env(home, KIROCREW_SUMMARY_ENABLED="0")  # frames only: no pass queued
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_app", APP).strip().splitlines()[-1]
    daphne, port = daphne_start(env, logs)
    bearer = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=30) as api:
            wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
            with ws_connect(
                f"ws://127.0.0.1:{port}/ws/dashboard/", additional_headers=bearer, open_timeout=10
            ) as ws:
                assert json.loads(ws.recv(timeout=10))["type"] == "hello"
                wait_for(
                    "the relay", (home / "frames" / ".relay").exists, within=10, procs=[daphne]
                )
                manage(env, "create_app", APP, "--rotate")
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=10)
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 4401
    finally:
        daphne.stop()
        print(f"--- daphne\n{daphne.output()[-4000:]}")
