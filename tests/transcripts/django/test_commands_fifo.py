"""Every command over a sessions directory holding a FIFO, a socket and a link, run as a
real process with a timeout: a command that opened the FIFO would block for a writer
forever, and ``subprocess.run`` raising ``TimeoutExpired`` fails the test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from tests.transcripts.helpers import copy_fixtures

TIMEOUT_S = 90  # generous on 2 shared cores; only a hang gets near it
FIFO_REASON = "not a regular file: a FIFO"
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    home = tmp_path / "cli-home"
    home.mkdir()
    env = {**os.environ, "KIROCREW_HOME": str(home), "KIROCREW_TRANSCRIPT_FSYNC": "never"}
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, str(Path(django_settings.BASE_DIR) / "manage.py")]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*manage, *args], env=env, capture_output=True, text=True, timeout=TIMEOUT_S
        )

    assert run("migrate", "--noinput", "-v0").returncode == 0
    return run


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Callable[[Path], None]]:
    held: list[socket.socket] = []

    def bind(path: Path) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        held.append(sock)

    yield bind
    for sock in held:
        sock.close()


def test_no_command_hangs_on_a_fifo(cli: Cli, tmp_path: Path, unix_socket) -> None:
    sessions = tmp_path / "cli-home" / "sessions"
    source = copy_fixtures(tmp_path / "src")
    assert cli("import_transcripts", str(source)).returncode == 0
    os.mkfifo(sessions / "dashboard_fifo.jsonl")
    os.mkfifo(sessions / "archive" / "dashboard_starter__20200101-000000.jsonl")  # chained
    unix_socket(sessions / "dashboard_sock.jsonl")
    (sessions / "dashboard_passwd.jsonl").symlink_to("/etc/passwd")

    done = cli("verify_transcripts")
    assert done.returncode == 1, done.stderr
    assert f"PROBLEM dashboard_fifo.jsonl: not_regular_file: {FIFO_REASON}; skipped" in done.stdout
    assert "dashboard_sock.jsonl: not_regular_file: not a regular file: a socket" in done.stdout
    assert "dashboard_passwd.jsonl: not_regular_file: not a regular file: a symbolic link" in (
        done.stdout
    )
    assert "Checked 7 transcripts: 3 problems found" in done.stderr
    assert cli("verify_transcripts", "--repair").returncode == 1

    done = cli("rotate_transcripts", "--force")
    assert done.returncode == 1, done.stderr
    assert f"dashboard_fifo.jsonl: skipped: {FIFO_REASON}" in done.stdout
    assert "dashboard:starter: dropped" in done.stdout  # the regular ones were rotated
    assert "Rotated 4 transcripts" in done.stderr
    assert "3 failed or skipped" in done.stderr

    done = cli("import_transcripts")  # in place
    assert done.returncode == 1
    assert f"  dashboard_fifo.jsonl: {FIFO_REASON}" in done.stdout
    assert "unchanged 4" in done.stdout

    done = cli("cleanup_archives", "--days", "0")
    assert done.returncode == 1
    assert f"skipped archive/dashboard_starter__20200101-000000.jsonl: {FIFO_REASON}" in (
        done.stdout
    )
    assert (sessions / "archive" / "dashboard_starter__20200101-000000.jsonl").exists()


def test_a_fifo_in_the_import_directory(cli: Cli, tmp_path: Path) -> None:
    source = copy_fixtures(tmp_path / "src")
    os.mkfifo(source / "dashboard_fifo.jsonl")
    os.mkfifo(source / "archive" / "dashboard_starter__20200101-000000.jsonl")

    done = cli("import_transcripts", str(source))
    assert done.returncode == 1, done.stderr
    assert f"  dashboard_fifo.jsonl: {FIFO_REASON}" in done.stdout
    assert f"  archive/dashboard_starter__20200101-000000.jsonl: {FIFO_REASON}" in done.stdout
    assert "Imported 4, unchanged 0, bad 2" in done.stdout

    done = cli("import_transcripts", str(source), "-v", "0")  # nothing per file, or at all
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip() == "CommandError: 2 files skipped (bad 2, conflicts 0)"
