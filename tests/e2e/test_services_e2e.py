"""The services profile with real components: daphne and a Celery worker as separate
processes on PostgreSQL and Redis (loopback), a WebSocket client, the HTTP API, and a
loopback OpenAI-compatible model server.

1. A turn driven through the API is summarized by the WORKER, and the ``session_summary``
   frame it pushes crosses the Redis channel layer to the client connected to daphne.
2. The worker is SIGKILLed while it waits for the model: no temp file or partial sidecar
   is left, the old summary still parses and is served; the dead pass's claim dies with
   it, the unacked task (acks_late) is redelivered to a restarted worker, and that
   pass stores a new summary and pushes a new frame. No marker is left behind.

Everything is dedicated to the test and removed afterwards: a PostgreSQL database
``kirocrew_e2e_<random>``, two Redis database numbers (channel layer and broker, flushed
before and after), a ``KIROCREW_HOME`` under ``tmp_path`` and every process group.
"""

from __future__ import annotations

import json
import re
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from tests.e2e.processes import (
    BIN,
    Proc,
    celery_worker_start,
    free_port,
    health,
    manage,
    recv_until,
    stack_env,
    wait_for,
)
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(240)]

MARKER_TTL = 6  # seconds: the killed pass's marker outlives its worker this long
VISIBILITY = 8  # seconds: an unacked task is redelivered once it is this old
TASK_RECEIVED = re.compile(r"Task summaries\.summarize_slot\[([0-9a-f-]+)\] received")
HOLD = 120  # seconds the model server sits on the request the worker dies waiting for


def intent(title: str, status: str = "completed") -> dict[str, Any]:
    return {
        "title": title,
        "ranges": [[1, 1]],
        "status": status,
        "verified": True,
        "origin_turn": None,
        "initial_intent": f"The user asked: {title}.",
        "progress": [f"{title}: done and tested."],
        "next_steps": [],
    }


FIRST = json.dumps({"intents": [intent("Add a CSV export button")], "constraints": []})
NEVER = json.dumps({"intents": [intent("This reply must never be stored")], "constraints": []})
SECOND = json.dumps(
    {
        "intents": [intent("Paginate the export", "active"), intent("Add a CSV export button")],
        "constraints": ["Exports stay under 10 MB"],
    }
)


# --------------------------------------------------------------------------- the stack


class Stack:
    """The processes of one run and the client-side handles onto them."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.procs: list[Proc] = []
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workers = 0

    def start_daphne(self) -> Proc:
        proc = Proc(
            "daphne",
            [
                str(BIN / "daphne"),
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "kirocrew_site.asgi:application",
            ],
            self.env,
            self.logs,
        )
        self.procs.append(proc)
        return proc

    def start_worker(self) -> Proc:
        self.workers += 1
        proc = celery_worker_start(
            self.env, self.logs, f"worker{self.workers}-{secrets.token_hex(3)}"
        )
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            proc.stop()
        for proc in self.procs:  # shown by pytest when the test failed
            print(f"--- {proc.name} (exit {proc.popen.returncode})\n{proc.output()[-6000:]}")


@pytest.fixture
def stack(
    tmp_path: Path, pg_url: str, redis_urls: tuple[str, str], fake_openai: FakeOpenAIServer
) -> Iterator[Stack]:
    home = tmp_path / "home"
    logs = tmp_path / "logs"
    logs.mkdir()
    env = stack_env(
        home,
        pg_url,
        redis_urls,
        KIROCREW_SUMMARY_ENABLED="1",
        KIROCREW_SUMMARY_MIN_USER_TURNS="1",
        KIROCREW_SUMMARY_MODEL="openai:test-model",
        KIROCREW_OPENAI_BASE_URL=fake_openai.base_url,
        KIROCREW_OPENAI_TIMEOUT=str(HOLD),
        KIROCREW_SUMMARY_IN_FLIGHT_TTL=str(MARKER_TTL),
        KIROCREW_CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY),
        # One scripted reply per pass: every pass reads the whole session (no update pass
        # that the checks could send back for a second, unscripted call).
        KIROCREW_SUMMARY_FULL_PASS_EVERY="1",
    )
    manage(env, "migrate", "--noinput")
    built = Stack(env, logs)
    try:
        yield built
    finally:
        built.close()


# --------------------------------------------------------------------------- the client side


def summary_frame(slot: str) -> Callable[[dict[str, Any]], bool]:
    return lambda f: f == {"type": "session_summary", "data": {"key": slot}}


def drive_turn(api: httpx.Client, slot: str, ask: str, answer: str) -> None:
    base = f"/api/chat/slots/{slot}"
    response = api.post(f"{base}/turns", json={"content": ask})
    assert response.status_code == 201, response.text
    response = api.post(f"{base}/rows", json={"role": "assistant", "content": answer})
    assert response.status_code == 201, response.text
    response = api.post(f"{base}/turns/end", json={"stop_reason": "end_turn"})
    assert response.status_code == 200, response.text


def marker_of(pg_url: str, slot: str) -> Any:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT m.in_flight_until, now() FROM transcripts_slot s "
            "LEFT JOIN summaries_summarystate m ON m.slot_id = s.id WHERE s.name = %s",
            (slot,),
        ).fetchone()
    assert row is not None
    return row


def temp_files(home: Path) -> list[str]:
    sessions = home / "sessions"
    return sorted(str(p.relative_to(sessions)) for p in sessions.rglob("*.tmp-*"))


# --------------------------------------------------------------------------- the test


def test_worker_summary_reaches_the_socket_and_survives_a_sigkill_mid_pass(
    stack: Stack, fake_openai: FakeOpenAIServer, pg_url: str
):
    home = Path(stack.env["KIROCREW_HOME"])
    token = manage(stack.env, "create_app", "e2e-app").strip().splitlines()[-1]
    assert token.startswith("kc_")
    daphne = stack.start_daphne()
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=stack.base, headers=bearer, timeout=30) as api:
        wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
        worker = stack.start_worker()
        with ws_connect(
            f"ws://127.0.0.1:{stack.port}/ws/dashboard/", additional_headers=bearer, open_timeout=10
        ) as ws:
            assert json.loads(ws.recv(timeout=10)) == {"type": "hello", "data": {"scope": "app"}}
            _scenario(stack, api, ws, worker, home, fake_openai, pg_url)
    assert fake_openai.unscripted == 0


def _scenario(
    stack: Stack,
    api: httpx.Client,
    ws: ClientConnection,
    worker: Proc,
    home: Path,
    fake_openai: FakeOpenAIServer,
    pg_url: str,
) -> None:
    # --- 1. a turn through the API; the worker's summary frame reaches the socket -------
    response = api.post("/api/chat/slots", json={"name": "e2e-1", "title": "Exports"})
    assert response.status_code == 201, response.text
    slot = "e2e-1"
    fake_openai.enqueue(Behaviour.reply(FIRST))
    drive_turn(api, slot, "Please add a CSV export button.", "Added it; tests pass.")
    frames = recv_until(ws, summary_frame(slot), within=30)
    assert [f["type"] for f in frames] == ["turn", "row", "row", "turn", "session_summary"]
    assert len(fake_openai.requests) == 1
    stored_by = "Session summary stored for e2e-1"
    # The worker, not daphne, ran the pass (the frame crossed the Redis layer).
    wait_for("the worker's log", lambda: stored_by in worker.output(), within=10, procs=[worker])
    assert stored_by not in stack.procs[0].output()

    body = api.get(f"/api/chat/slots/{slot}/summary").json()
    assert [i["title"] for i in body["intents"]] == ["Add a CSV export button"]
    assert body["model"] == "openai:test-model"
    assert body["stale"] is False
    sidecars = sorted((home / "sessions" / ".intents").glob("*.json"))
    assert len(sidecars) == 1
    sidecar = sidecars[0]
    first_bytes = sidecar.read_bytes()

    # --- 2. the next pass is SIGKILLed while it waits for the model ----------------------
    fake_openai.enqueue(Behaviour.sleep(HOLD, Behaviour.reply(NEVER)))
    drive_turn(
        api,
        slot,
        "Now paginate the export, please. Exports stay under 10 MB, always.",
        "Paginated; 50 rows a page.",
    )
    recv_until(ws, lambda f: f["type"] == "turn" and not f["data"]["running"], within=10)
    wait_for(
        "the worker's model call",
        lambda: len(fake_openai.requests) == 2,
        within=30,
        procs=[worker],
    )
    held_until, _ = marker_of(pg_url, slot)
    assert held_until is not None  # queued, then running: "generating"
    killed_task = TASK_RECEIVED.findall(worker.output())[-1]
    worker.kill(signal.SIGKILL)
    assert worker.popen.returncode == -signal.SIGKILL
    killed_at = time.monotonic()

    assert temp_files(home) == []  # no temp file left behind
    assert sidecar.read_bytes() == first_bytes  # no partial sidecar: the old one, whole
    assert [i["title"] for i in json.loads(first_bytes)["intents"]] == ["Add a CSV export button"]
    body = api.get(f"/api/chat/slots/{slot}/summary").json()
    assert [i["title"] for i in body["intents"]] == ["Add a CSV export button"]
    assert body["stale"] is True  # still served, and flagged: the transcript moved on
    assert body["new_turns"] == 1
    # The dead pass's claim died with it; its "generating" flag blocks nothing (a POST
    # now would queue a pass of its own, so none is made here: step 3 is the redelivery).

    # --- 3. a restarted worker gets the redelivered task -------------
    fake_openai.enqueue(Behaviour.reply(SECOND))
    time.sleep(max(0.0, VISIBILITY + 0.5 - (time.monotonic() - killed_at)))
    worker = stack.start_worker()
    frames = recv_until(ws, summary_frame(slot), within=45)
    assert frames[-1] == {"type": "session_summary", "data": {"key": slot}}
    wait_for(
        "the new worker's log", lambda: stored_by in worker.output(), within=10, procs=[worker]
    )
    # The very task the killed worker had taken (acks_late: never acked) ran again here.
    # Celery logs "succeeded" a moment after the pass logs "stored": wait for it.
    wait_for(
        "the redelivered task's success",
        lambda: f"summarize_slot[{killed_task}] succeeded" in worker.output(),
        within=10,
        procs=[worker],
    )
    assert TASK_RECEIVED.findall(worker.output()) == [killed_task]
    assert len(fake_openai.requests) == 3  # the redelivered task called the model again

    body = api.get(f"/api/chat/slots/{slot}/summary").json()
    assert [i["title"] for i in body["intents"]] == [
        "Paginate the export",
        "Add a CSV export button",
    ]
    assert body["stale"] is False
    assert body["constraints"] == ["Exports stay under 10 MB"]
    assert json.loads(sidecar.read_bytes())["intents"][0]["title"] == "Paginate the export"
    assert "never be stored" not in sidecar.read_text()
    assert temp_files(home) == []
    held_until, _ = marker_of(pg_url, slot)
    assert held_until is None  # cleared by the pass that ran for it: not "generating"

    # The route agrees: the POST queues a pass (202), which finds the summary current
    # and costs no model call.
    response = api.post(f"/api/chat/slots/{slot}/summary")
    assert response.status_code == 202, response.text
    assert response.json()["intents"][0]["title"] == "Paginate the export"
    wait_for(
        "the POST's pass",
        lambda: (
            "summarize_slot" in worker.output()
            and len(TASK_RECEIVED.findall(worker.output())) == 2
            and marker_of(pg_url, slot)[0] is None
        ),
        within=30,
        procs=[worker],
    )
    assert len(fake_openai.requests) == 3
