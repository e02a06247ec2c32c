"""Two Celery workers do not run a pass per turn end for a slot whose turns follow each
other: a turn end's pass waits out the settle and gives way to the later turn end's, so
the model is called once for the three turns, and that summary covers all three.

Real processes: daphne and two Celery workers on PostgreSQL and Redis, a loopback
OpenAI-compatible model server that counts its requests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import (
    Proc,
    celery_worker_start,
    daphne_start,
    health,
    manage,
    stack_env,
    wait_for,
)
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(240)]

SLOT = "settle-1"
REPLY = json.dumps(
    {
        "intents": [
            {
                "title": "Speed up the export",
                "ranges": [[1, 3]],
                "status": "active",
                "verified": False,
                "origin_turn": None,
                "initial_intent": "The user asked: Speed up the export.",
                "progress": [],
                "next_steps": [],
            }
        ],
        "constraints": [],
    }
)
# Long enough for a pass that runs at once to reach the model (it did, before the settle).
PASS_AT_ONCE = 3.0


@pytest.fixture
def procs(
    tmp_path: Path, pg_url: str, redis_urls: tuple[str, str], fake_openai: FakeOpenAIServer
) -> Iterator[tuple[dict[str, str], list[Proc], int]]:
    logs = tmp_path / "logs"
    logs.mkdir()
    env = stack_env(
        tmp_path / "home",
        pg_url,
        redis_urls,
        # Far longer than the test's three turns take: each turn end's pass is still
        # waiting when the next turn ends, whatever the machine's load.
        KIROCREW_SUMMARY_SETTLE="20",
        KIROCREW_SUMMARY_ENABLED="1",
        KIROCREW_SUMMARY_MIN_USER_TURNS="1",
        KIROCREW_SUMMARY_MODEL="openai:test-model",
        KIROCREW_OPENAI_BASE_URL=fake_openai.base_url,
        KIROCREW_SUMMARY_FULL_PASS_EVERY="1",  # one model call per pass
    )
    manage(env, "migrate", "--noinput")
    started: list[Proc] = []
    try:
        daphne, port = daphne_start(env, logs)
        started.append(daphne)
        started += [celery_worker_start(env, logs, f"settle{n}") for n in (1, 2)]
        yield env, started, port
    finally:
        for proc in started:
            proc.stop()
        for proc in started:  # shown by pytest when the test failed
            print(f"--- {proc.name}\n{proc.output()[-4000:]}")


def test_two_workers_summarize_back_to_back_turns_once(
    procs: tuple[dict[str, str], list[Proc], int], fake_openai: FakeOpenAIServer
) -> None:
    env, started, port = procs
    fake_openai.default = Behaviour.reply(REPLY)
    token = manage(env, "create_app", "settle-app").strip().splitlines()[-1]
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=30) as api:
        wait_for("daphne to answer", lambda: health(api), within=30, procs=started)
        assert api.post("/api/chat/slots", json={"name": SLOT}).status_code == 201
        base = f"/api/chat/slots/{SLOT}"
        for n in range(1, 4):
            assert api.post(f"{base}/turns", json={"content": f"speed up export {n}"}).is_success
            assert api.post(f"{base}/rows", json={"role": "assistant", "content": "ok"}).is_success
            ended = api.post(f"{base}/turns/end", json={"stop_reason": "end_turn"})
            assert ended.status_code == 200, ended.text
            # Without the settle a free worker's pass calls the model now; the wait only
            # gives it the chance (it asserts nothing).
            fake_openai.wait_requests(n, timeout=PASS_AT_ONCE)

        def summarized() -> bool:
            body = api.get(f"{base}/summary").json()
            return bool(body["user_turns"] == 3 and body["generate_state"] != "generating")

        wait_for("the summary of all three turns", summarized, within=90, procs=started)

    assert len(fake_openai.requests) == 1
    outputs = "".join(proc.output() for proc in started[1:])
    assert outputs.count(f"Session summary skipped for {SLOT}: superseded") == 2
    assert outputs.count(f"Session summary stored for {SLOT}") == 1
