"""A new user's first runs, as real processes on a fresh KIROCREW_HOME: commands before
``migrate``, and ``make run``'s two steps (migrate; demo against a live server) twice."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kirocrew_site.demo import SAMPLES_DIR
from tests.e2e.processes import manage_run

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def environment(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KIROCREW_", "DJANGO_", "DATABASE_URL", "REDIS_URL", "CELERY_"))
    }
    env.update(
        KIROCREW_HOME=str(home),
        KIROCREW_TRANSCRIPT_FSYNC="never",
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


def manage(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return manage_run(environment(home), *args)


@pytest.mark.parametrize(
    "args",
    [
        ("import_transcripts", str(SAMPLES_DIR)),
        ("verify_transcripts",),
        ("rotate_transcripts", "--force"),
        ("cleanup_archives",),
        ("create_app", "my-runner"),
        ("summarize", "starter"),
        ("demo", "--no-replay"),
        # Django's own account commands, which the README and the login page name first.
        ("createsuperuser", "--noinput", "--username", "admin", "--email", "a@example.com"),
        ("changepassword", "admin"),
    ],
    ids=lambda args: args[0],
)
def test_a_command_before_migrate_says_run_migrate_and_writes_nothing(tmp_path, args):
    home = tmp_path / "home"
    home.mkdir()

    done = manage(home, *args)

    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    assert "OperationalError" not in done.stderr
    assert "run `.venv/bin/python manage.py migrate` first" in done.stderr  # no django elsewhere
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    # The database checked is named: a terminal without KIROCREW_HOME reads ./var instead.
    assert f"the database {home / 'kirocrew.sqlite3'} is not set up yet" in done.stderr
    sessions = home / "sessions"
    assert not sessions.exists() or not any(sessions.rglob("*.jsonl"))  # nothing copied
    assert not (home / "config.json").exists()


def test_createsuperuser_after_migrate_still_creates_the_user(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert manage(home, "migrate", "--noinput", "-v", "0").returncode == 0
    env = {**environment(home), "DJANGO_SUPERUSER_PASSWORD": "pw-admin-123"}
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "createsuperuser",
            "--noinput",
            "--username",
            "admin",
            "--email",
            "a@example.com",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Superuser created successfully." in done.stdout


def test_a_second_demo_run_says_what_happened_to_every_sample(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert manage(home, "migrate", "--noinput", "-v", "0").returncode == 0
    assert manage(home, "demo", "--no-replay").returncode == 0
    # The person worked in one sample meanwhile: the store's copy differs from the sample.
    with (home / "sessions" / "dashboard_starter.jsonl").open("a") as fp:
        fp.write('{"ts": "2030-01-01T00:00:00+00:00", "role": "user", "content": "more"}\n')

    again = manage(home, "demo", "--no-replay")

    assert again.returncode == 0, again.stderr
    assert (
        "demo: sample sessions: 0 imported, 3 unchanged, 1 left as they are (changed in the "
        "store since they were imported): dashboard_starter\n"
    ) in again.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[tuple[Path, str, Path]]:
    """``make run`` without make: migrate, then daphne on a free port (the demo is the test's)."""
    home = tmp_path / "home"
    home.mkdir()
    assert manage(home, "migrate", "--noinput", "-v", "0").returncode == 0
    port = free_port()
    log = home / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-p", str(port), "kirocrew_site.asgi:application"],
            cwd=ROOT,
            env=environment(home),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                httpx.get(f"{url}/login/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield home, url, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_make_run_twice_replays_cleanly_with_no_traceback_or_broker_warning(fresh_server):
    home, url, log = fresh_server
    runs = [manage(home, "demo", "--url", url, "--pause", "0", "--wait", "30") for _ in range(2)]

    for done in runs:
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        assert "Traceback" not in output
        assert "turn 5 of 5 done" in done.stdout
    server_log = log.read_text()
    assert "Traceback" not in server_log
    assert " 404 " not in server_log  # no DELETE of a slot the new app cannot see
    assert " 409 " not in server_log
    assert "No hostname was supplied" not in server_log  # no broker configured: no kombu noise
    assert "1 intents" not in server_log
    assert "Password:" in runs[0].stdout
    assert "Password:" not in runs[1].stdout
