"""Where a summary pass runs in the embedded profile, and in which order: real daphne, a
loopback model server that holds each request until the test lets it go, and the HTTP
turn API. No patching: ``make run`` with an OpenAI-compatible model."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.held_model import HeldModel, held_model
from tests.e2e.processes import (
    BIN,
    ROOT,
    Proc,
    daphne_start,
    embedded_env,
    health,
    manage,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def summary_env(home: Path, model: HeldModel, **extra: str) -> dict[str, str]:
    return embedded_env(
        home,
        KIROCREW_SUMMARY_ENABLED="1",
        KIROCREW_SUMMARY_MIN_USER_TURNS="1",
        KIROCREW_SUMMARY_MODEL="openai:held",
        KIROCREW_OPENAI_BASE_URL=model.base_url,
        KIROCREW_OPENAI_TIMEOUT="120",
        KIROCREW_SUMMARY_WORKERS="1",
        **extra,
    )


def one_turn(api: httpx.Client, slot: str, tag: str) -> None:
    """A slot with one user turn naming ``tag`` and a clean end (which queues its pass)."""
    assert api.post("/api/chat/slots", json={"name": slot}).status_code == 201
    turn = api.post(f"/api/chat/slots/{slot}/turns", json={"content": f"{tag}: fix the login"})
    assert turn.status_code == 201, turn.text
    row = api.post(f"/api/chat/slots/{slot}/rows", json={"role": "assistant", "content": "Done."})
    assert row.status_code == 201, row.text
    end = api.post(f"/api/chat/slots/{slot}/turns/end", json={"stop_reason": "end_turn"})
    assert end.status_code == 200, end.text


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of ``pid``'s child processes."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            found.append((int(child), cmdline.decode(errors="replace")))
    return found


def stored(api: httpx.Client, slot: str) -> bool:
    return bool(api.get(f"/api/chat/slots/{slot}/summary").json().get("intents"))


def test_a_busy_apps_passes_run_off_the_server_and_do_not_queue_another_app_behind_them(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    with held_model() as model:
        env = summary_env(tmp_path / "home", model)
        manage(env, "migrate", "--noinput")
        busy_token = manage(env, "create_app", "busy").strip().splitlines()[-1]
        quiet_token = manage(env, "create_app", "quiet").strip().splitlines()[-1]
        daphne, port = daphne_start(env, logs)
        procs: list[Proc] = [daphne]
        base = f"http://127.0.0.1:{port}"
        try:
            with (
                httpx.Client(base_url=base, timeout=30, headers=_bearer(busy_token)) as busy,
                httpx.Client(base_url=base, timeout=30, headers=_bearer(quiet_token)) as quiet,
            ):
                wait_for("daphne", lambda: health(busy), within=30, procs=procs)
                for n in range(4):
                    one_turn(busy, f"busy-{n}", f"tag-busy-{n}")
                assert model.wait_arrivals(1) == ["tag-busy-0"]

                # The pass waiting on the model is a child process of the server's, not
                # one of its threads; the server answers meanwhile.
                passes = [c for c in children(daphne.popen.pid) if "summaries.passworker" in c[1]]
                assert len(passes) == 1, children(daphne.popen.pid)
                assert passes[0][0] != daphne.popen.pid
                assert passes[0][0] != os.getpid()
                assert quiet.get("/api/health").status_code == 200

                one_turn(quiet, "quiet-0", "tag-quiet-0")  # three of busy's passes wait
                model.release()
                # The quiet app's pass comes next, not after all of the busy app's.
                assert model.wait_arrivals(2) == ["tag-busy-0", "tag-quiet-0"]
                model.release_all()
                wait_for(
                    "quiet's summary", lambda: stored(quiet, "quiet-0"), within=60, procs=procs
                )
                wait_for("busy's summaries", lambda: model.answered == 5, within=60, procs=procs)
                assert model.arrived[2:] == ["tag-busy-1", "tag-busy-2", "tag-busy-3"]
                assert all(stored(busy, f"busy-{n}") for n in range(4))
        finally:
            model.release_all()
            daphne.stop()


def summarize_command(env: dict[str, str], slot: str) -> subprocess.CompletedProcess[str]:
    """``manage.py summarize SLOT``: a forced pass in a process of its own."""
    return subprocess.run(
        [str(BIN / "python"), "manage.py", "summarize", slot],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_one_pass_per_slot_however_long_and_a_killed_pass_blocks_nothing(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    with held_model() as model:
        env = summary_env(tmp_path / "home", model)
        manage(env, "migrate", "--noinput")
        token = manage(env, "create_app", "solo").strip().splitlines()[-1]
        daphne, port = daphne_start(env, logs)
        procs: list[Proc] = [daphne]
        url = "/api/chat/slots/s1/summary"
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{port}", timeout=30, headers=_bearer(token)
            ) as api:
                wait_for("daphne", lambda: health(api), within=30, procs=procs)
                one_turn(api, "s1", "tag-solo-0")
                assert model.wait_arrivals(1) == ["tag-solo-0"]  # the pass waits on the model
                assert api.get(url).json()["generate_state"] == "generating"

                # Another process's pass for the slot is refused while this one runs, for
                # as long as it runs: no expiry lets a second one in.
                second = summarize_command(env, "s1")
                assert second.returncode == 1, second.stderr
                assert "in_flight" in second.stderr, second.stderr
                assert model.arrived == ["tag-solo-0"]

                [(child, _)] = [
                    c for c in children(daphne.popen.pid) if "summaries.passworker" in c[1]
                ]
                os.kill(child, signal.SIGKILL)  # the pass dies mid-call

                # The next pass is not blocked by the dead one: the POST queues it (202,
                # "generating") and it reaches the model.
                queued = api.post(url)
                assert queued.status_code == 202, queued.text
                assert queued.json()["generate_state"] == "generating"
                assert model.wait_arrivals(2) == ["tag-solo-0", "tag-solo-0"]
                model.release_all()
                wait_for("the summary", lambda: stored(api, "s1"), within=60, procs=procs)
                # The pass clears "generating" just after it stored: no flag is left behind.
                wait_for(
                    "generate_state ready",
                    lambda: api.get(url).json()["generate_state"] == "ready",
                    within=30,
                    procs=procs,
                )
        finally:
            model.release_all()
            daphne.stop()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
