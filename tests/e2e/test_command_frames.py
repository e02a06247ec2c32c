"""A management command in its own process reaches a browser's socket on the server.

With ``REDIS_URL`` the channel layer is Redis, so what a command announces after its
commit (here ``import_transcripts``: a clean turn end, then rows appended by ``--follow``)
becomes frames in THAT process, crosses Redis, and arrives at a WebSocket client connected
to a separate daphne process. With the in-memory layer these frames would be lost.

Dedicated resources as in ``test_services_e2e`` (the ``conftest`` fixtures): a fresh
PostgreSQL database, two Redis database numbers flushed around the test, a
``KIROCREW_HOME`` under ``tmp_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect as ws_connect

from tests.e2e.processes import (
    append_prompt_and_tool_call,
    daphne_start,
    health,
    manage,
    nth_row,
    recv_until,
    stack_env,
    wait_for,
)
from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, copy_tree

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(180)]

APP = "cmd-frames"
SLOT = f"claude:{CLAUDE_SID}"  # an imported Claude Code session's slot is its key


def test_frames_from_a_command_process_reach_a_socket_on_the_server(
    tmp_path: Path,
    pg_url: str,
    redis_urls: tuple[str, str],
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    # frames only: no pass is queued for the turn end
    env = stack_env(tmp_path / "home", pg_url, redis_urls, KIROCREW_SUMMARY_ENABLED="0")
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_app", APP).strip().splitlines()[-1]
    assert token.startswith("kc_")
    daphne, port = daphne_start(env, logs)
    src = copy_tree(tmp_path / "src")
    source = src / CLAUDE_FILE
    bearer = {"Authorization": f"Bearer {token}"}
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

                # 1. The import creates the app's session; its last turn ended cleanly.
                manage(
                    env, "import_transcripts", "--format", "claude-code", "--app", APP, str(source)
                )
                ended = recv_until(ws, lambda f: f["type"] == "turn", within=20)
                assert ended == [
                    {
                        "type": "turn",
                        "data": {"key": SLOT, "running": False, "stop_reason": "end_turn"},
                    }
                ]

                # 2. Two records appended to the source; one --follow poll imports them.
                append_prompt_and_tool_call(source, "new1")
                manage(
                    env,
                    "import_transcripts",
                    "--format",
                    "claude-code",
                    "--follow",
                    "--polls",
                    "1",
                    str(source),
                )
                rows = recv_until(ws, nth_row(2), within=20)

            response = api.get(f"/api/chat/slots/{SLOT}/transcript")
            assert response.status_code == 200, response.text
            stored = response.json()["rows"][-2:]
    finally:
        daphne.stop()
        print(f"--- daphne\n{daphne.output()[-4000:]}")  # shown when the test failed

    # The frames name exactly the rows the command appended, in order.
    assert rows == [
        {"type": "row", "data": {"key": SLOT, "ts": row["ts"], "role": row["role"]}}
        for row in stored
    ]
    assert stored[0]["role"] == "user"
