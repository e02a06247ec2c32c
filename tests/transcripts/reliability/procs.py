"""Helpers to run ``writer_child`` sub-commands as real processes, always with a deadline."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[3]
CHILD = "tests.transcripts.reliability.writer_child"
CHILD_TIMEOUT_S = 60.0


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("KIROCREW_TEST_NOLOCK", None)
    env.pop("KIROCREW_TEST_NO_TRUNCATE", None)
    env.update(extra)
    return env


def child_argv(*args: object) -> list[str]:
    return [sys.executable, "-m", CHILD, *(str(a) for a in args)]


def spawn(
    *args: object,
    pass_fds: tuple[int, ...] = (),
    env: dict[str, str] | None = None,
    stdout: int | None = subprocess.PIPE,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        child_argv(*args),
        cwd=PROJECT,
        env=env or child_env(),
        pass_fds=pass_fds,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=preexec_fn,
    )


def run(
    *args: object,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    timeout: float = CHILD_TIMEOUT_S,
) -> tuple[dict[str, Any], str, str]:
    """Run a child to completion; return its last JSON line, its stdout and stderr."""
    proc = spawn(*args, env=env, preexec_fn=preexec_fn)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"child {args[0]} did not finish in {timeout}s") from None
    text, errors = out.decode(), err.decode()
    assert proc.returncode == 0, f"child {args[0]} exited {proc.returncode}:\n{errors}"
    lines = [line for line in text.splitlines() if line.startswith("{")]
    assert lines, f"child {args[0]} printed no result:\n{text}\n{errors}"
    return json.loads(lines[-1]), text, errors


class LineReader:
    """Whole lines from a pipe fd, with a deadline on every wait (never blocks forever)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.eof = False

    def poll(self, timeout: float) -> list[str]:
        """Lines that arrive within ``timeout`` seconds (maybe none)."""
        if self.eof:
            return []
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if ready:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        return [line.decode() for line in lines]

    def wait_for(self, token: str, timeout: float) -> list[str]:
        """Read until a line equal to ``token``; every line read is returned."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline and not self.eof:
            seen += self.poll(deadline - time.monotonic())
            if token in seen:
                return seen
        raise AssertionError(f"no {token!r} within {timeout}s (eof={self.eof}, got {seen[-3:]})")

    def drain(self, timeout: float = CHILD_TIMEOUT_S) -> list[str]:
        """Every remaining line up to EOF (the writer's end must be closed everywhere)."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while not self.eof:
            if time.monotonic() >= deadline:
                raise AssertionError("pipe did not reach EOF in time")
            seen += self.poll(deadline - time.monotonic())
        return seen


def reap(proc: subprocess.Popen[bytes], timeout: float = CHILD_TIMEOUT_S) -> int:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("child did not exit in time") from None
