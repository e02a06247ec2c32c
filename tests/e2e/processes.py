"""Processes and polling for the services-profile end-to-end tests: children in their own
process groups with their output in log files, ``manage.py`` runs, health and frame waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from websockets.sync.client import ClientConnection

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def with_path(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Proc:
    """A child in its own process group, output to a log file."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        logs: Path,
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self.name = name
        self.log_path = logs / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.popen = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=pass_fds,
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the whole group (any child it forked too) and reap the leader."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=10)
        self._log.close()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers; never raises."""
        if self.alive():
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
                self.popen.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        self.kill()


def wait_for(what: str, check: Callable[[], Any], *, within: float, procs: list[Proc]) -> Any:
    """Poll ``check`` until it returns something truthy; fail with the processes' logs."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        for proc in procs:
            if not proc.alive():
                pytest.fail(
                    f"{proc.name} exited while waiting for {what}:\n{proc.output()[-4000:]}"
                )
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p.name}\n{p.output()[-3000:]}" for p in procs)
            pytest.fail(f"timed out after {within}s waiting for {what}\n{tails}")
        time.sleep(0.1)


def embedded_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment minus every setting of ours: the embedded defaults (no
    DATABASE_URL, no REDIS_URL: SQLite and the in-memory layer), a private ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KIROCREW_", "CELERY_", "DJANGO_", "DATABASE_URL", "REDIS_URL"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        PYTHONUNBUFFERED="1",
        KIROCREW_HOME=str(home),
        KIROCREW_TRANSCRIPT_FSYNC="rotate",
    )
    env.update(extra)
    return env


def stack_env(home: Path, pg_url: str, redis_urls: tuple[str, str], **extra: str) -> dict[str, str]:
    """The environment of the stack's processes: the embedded one plus PostgreSQL, the
    channels-redis layer all processes share (``redis_urls[0]``) and the Celery broker
    (``redis_urls[1]``)."""
    return embedded_env(
        home,
        DATABASE_URL=pg_url,
        REDIS_URL=redis_urls[0],
        CELERY_BROKER_URL=redis_urls[1],
        **extra,
    )


def daphne_start(env: dict[str, str], logs: Path) -> tuple[Proc, int]:
    """daphne serving the site on a free loopback port, its output in ``logs``."""
    port = free_port()
    argv = [
        str(BIN / "daphne"),
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        "kirocrew_site.asgi:application",
    ]
    return Proc("daphne", argv, env, logs), port


def celery_worker_start(env: dict[str, str], logs: Path, name: str) -> Proc:
    """A real Celery worker (solo pool, one task at a time), returned once it is ready."""
    argv = [str(BIN / "celery"), "-A", "kirocrew_site", "worker", "--pool", "solo"]
    argv += ["--concurrency", "1", "-l", "info", "-n", f"{name}-{os.getpid()}@%h"]
    proc = Proc(name, argv, env, logs)
    wait_for("the worker to be ready", lambda: " ready." in proc.output(), within=45, procs=[proc])
    return proc


def append_prompt_and_tool_call(path: Path, tag: str) -> None:
    """Append to a Claude Code fixture session a new prompt and a reply still using a tool
    (so no clean turn end comes with them); ``tag`` makes their ids new."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    prompt, call = lines[3], lines[6]
    prompt["uuid"], call["uuid"] = f"p-{tag}", f"c-{tag}"
    call["message"]["id"] = f"msg_{tag}"
    call["message"]["content"][0]["id"] = f"toolu_{tag}"
    with path.open("a") as fp:
        fp.write(json.dumps(prompt) + "\n" + json.dumps(call) + "\n")


def nth_row(n: int) -> Callable[[dict[str, Any]], bool]:
    """A ``recv_until`` test: true at the ``n``th row frame."""
    seen: list[int] = [0]

    def done(frame: dict[str, Any]) -> bool:
        seen[0] += frame["type"] == "row"
        return seen[0] >= n

    return done


def manage_run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``manage.py <args>`` in a process of its own, whatever its exit status."""
    return subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def manage(env: dict[str, str], *args: str) -> str:
    """``manage.py <args>``, which must succeed: its output."""
    result = manage_run(env, *args)
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout


def recv_until(
    ws: ClientConnection, done: Callable[[dict[str, Any]], bool], within: float
) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + within
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no matching frame within {within}s; saw {seen}")
        try:
            frame = json.loads(ws.recv(timeout=remaining))
        except TimeoutError:
            continue
        seen.append(frame)
        if done(frame):
            return seen


def health(api: httpx.Client) -> bool:
    try:
        return api.get("/api/health").status_code == 200
    except httpx.TransportError:
        return False
