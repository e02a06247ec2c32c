"""An import's summary passes: a run killed or interrupted while its passes wait on the
model leaves nothing unsummarized for good, and Ctrl-C stops it at once. Real
``import_transcripts`` processes, real SIGKILL and SIGINT, a loopback model server that
holds each request until the test lets it go."""

from __future__ import annotations

import json
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

SESSIONS = 4


def claude_sessions(folder: Path, count: int, first: int = 0) -> Path:
    """``count`` Claude Code sessions of two clean turns each (numbered from ``first``);
    session n's user turns carry ``tag-import-<n>`` (the held model records which session
    a request is about)."""
    project = folder / "projects" / "-home-dev-proj"
    project.mkdir(parents=True, exist_ok=True)
    for n in range(first, first + count):
        sid = f"00000000-0000-4000-8000-{n:012d}"
        base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/proj"}
        base |= {"sessionId": sid, "version": "2.1.1", "gitBranch": "main"}
        lines, parent = [], None
        for turn in range(2):
            for i, rec in enumerate(
                (
                    {
                        "type": "user",
                        "message": {"role": "user", "content": f"tag-import-{n} step {turn}"},
                    },
                    {
                        "type": "assistant",
                        "message": {
                            "id": f"msg_{n}_{turn}",
                            "type": "message",
                            "role": "assistant",
                            "model": "claude-sonnet-4-5",
                            "content": [{"type": "text", "text": "Done, tests pass."}],
                            "stop_reason": "end_turn",
                        },
                    },
                )
            ):
                me = f"{n}-{turn}-{i}"
                stamp = f"2026-11-30T10:{turn:02d}:{i:02d}.000Z"
                lines.append(
                    json.dumps(
                        {"parentUuid": parent, **base, **rec, "uuid": me, "timestamp": stamp}
                    )
                )
                parent = me
        (project / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")
    return folder / "projects"


def env_for(home: Path, model: HeldModel) -> dict[str, str]:
    return embedded_env(
        home,
        KIROCREW_SUMMARY_ENABLED="1",
        KIROCREW_SUMMARY_MIN_USER_TURNS="1",
        KIROCREW_SUMMARY_MODEL="openai:held",
        KIROCREW_OPENAI_BASE_URL=model.base_url,
        KIROCREW_OPENAI_TIMEOUT="120",
        KIROCREW_SUMMARY_WORKERS="1",
    )


def summarized(home: Path) -> int:
    """Sessions with a stored summary (the sidecars are the truth)."""
    folder = home / "sessions" / ".intents"
    return len(list(folder.glob("*.json"))) if folder.exists() else 0


def start_import(env: dict[str, str], source: Path, logs: Path, name: str) -> Proc:
    argv = [str(BIN / "python"), "manage.py", "import_transcripts", "--format", "claude-code"]
    return Proc(name, [*argv, str(source)], env, logs)


def in_summary_phase(proc: Proc, model: HeldModel) -> None:
    wait_for(
        "the summary phase",
        lambda: "Summarizing: waiting" in proc.output() and model.arrived,
        within=90,
        procs=[proc],
    )


def import_run(env: dict[str, str], source: Path) -> str:
    """A foreground ``import_transcripts`` that must succeed; what it wrote (both streams:
    the summary phase's lines are log lines)."""
    argv = [str(BIN / "python"), "manage.py", "import_transcripts", "--format", "claude-code"]
    result = subprocess.run(
        [*argv, str(source)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    return output


def killed_in_its_summary_phase(
    env: dict[str, str], model: HeldModel, home: Path, source: Path, logs: Path
) -> None:
    """An import killed with SIGKILL while its first pass waits on the held model; then
    the model answers. The killed run's worker process (its own session) outlives it and
    stores that one pass: waited for, so ``LEFT`` sessions are left, every time."""
    first = start_import(env, source, logs, "import1")
    try:
        in_summary_phase(first, model)
    finally:
        first.kill(signal.SIGKILL)
    assert summarized(home) == 0
    model.release_all()  # the orphaned pass, and every one from now on
    wait_for("the orphaned pass", lambda: summarized(home) == 1, within=60, procs=[])


LEFT = SESSIONS - 1


def served_until_summarized(env: dict[str, str], home: Path, logs: Path, count: int) -> None:
    """A server of this home, started now, summarizes ``count`` sessions in all."""
    token = manage(env, "create_app", f"viewer{count}").strip().splitlines()[-1]
    daphne, port = daphne_start(env, logs)
    bearer = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30, headers=bearer) as api:
            wait_for("daphne", lambda: health(api), within=30, procs=[daphne])
            wait_for(
                "every session summarized",
                lambda: summarized(home) == count,
                within=90,
                procs=[daphne],
            )
    finally:
        daphne.stop()


HANDED_OFF = (
    "earlier sessions still need a summary: they will be summarized when the server "
    "runs or by the next import"
)


TO_THE_SERVER = "earlier sessions still need a summary: the running server is summarizing them"


def test_a_rerun_after_an_import_killed_in_its_summary_phase_waits_only_for_its_own_sessions(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    home = tmp_path / "home"
    source = claude_sessions(tmp_path / "claude", SESSIONS)
    with held_model() as model:
        env = env_for(home, model)
        manage(env, "migrate", "--noinput")
        killed_in_its_summary_phase(env, model, home, source, logs)

        out = import_run(env, source)
        assert "Imported 0, unchanged 4" in out, out  # nothing new: the backlog is earlier
        assert f"{LEFT} {HANDED_OFF}" in out, out
        assert "Summarizing: waiting" not in out, out
        assert summarized(home) == 1  # returned without running them

        claude_sessions(tmp_path / "claude", 1, first=SESSIONS)  # one new session
        out = import_run(env, source)
        assert "Imported 1, unchanged 4" in out, out
        assert f"{LEFT} {HANDED_OFF}" in out, out
        assert summarized(home) == 2  # its own session's pass ran before it returned

        served_until_summarized(env, home, logs, SESSIONS + 1)


def test_a_rerun_while_a_server_runs_hands_the_backlog_to_the_server(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    home = tmp_path / "home"
    source = claude_sessions(tmp_path / "claude", SESSIONS)
    with held_model() as model:
        env = env_for(home, model)
        manage(env, "migrate", "--noinput")
        token = manage(env, "create_app", "viewer").strip().splitlines()[-1]
        daphne, port = daphne_start(env, logs)
        bearer = {"Authorization": f"Bearer {token}"}
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{port}", timeout=30, headers=bearer
            ) as api:
                # Its first request swept an empty backlog: only the re-run's request
                # tells it about the killed run's sessions.
                wait_for("daphne", lambda: health(api), within=30, procs=[daphne])
                killed_in_its_summary_phase(env, model, home, source, logs)

                out = import_run(env, source)
                assert "Imported 0, unchanged 4" in out, out
                assert f"{LEFT} {TO_THE_SERVER}" in out, out
                wait_for(
                    "every session summarized by the server",
                    lambda: summarized(home) == SESSIONS,
                    within=90,
                    procs=[daphne],
                )
        finally:
            daphne.stop()


def test_ctrl_c_in_the_summary_phase_stops_with_one_line_and_a_server_finishes(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    home = tmp_path / "home"
    source = claude_sessions(tmp_path / "claude", SESSIONS)
    with held_model() as model:
        env = env_for(home, model)
        manage(env, "migrate", "--noinput")
        run = start_import(env, source, logs, "import")
        try:
            in_summary_phase(run, model)
            os.killpg(run.popen.pid, signal.SIGINT)  # as a terminal's Ctrl-C does
            code = run.popen.wait(timeout=60)
        finally:
            run.kill(signal.SIGKILL)
        output = run.output()
        assert code == 130, output
        assert "Traceback" not in output, output
        assert "never awaited" not in output, output
        after = output.split("Summarizing: waiting", 1)[1].splitlines()[1:]
        assert after == ["Interrupted."], output
        assert summarized(home) == 0

        model.release_all()
        assert f"{SESSIONS} {HANDED_OFF}" in import_run(env, source)
        served_until_summarized(env, home, logs, SESSIONS)


def test_a_server_started_after_a_killed_import_summarizes_what_it_left(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    home = tmp_path / "home"
    source = claude_sessions(tmp_path / "claude", SESSIONS)
    with held_model() as model:
        env = env_for(home, model)
        manage(env, "migrate", "--noinput")
        killed_in_its_summary_phase(env, model, home, source, logs)
        # Its first request queues the backlog; nothing else asks for a pass.
        served_until_summarized(env, home, logs, SESSIONS)
