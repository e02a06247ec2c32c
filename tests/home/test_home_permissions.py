"""The data folder is its owner's alone: real processes started under a permissive umask
(as from a normal login shell) create a home no other local user can read, an existing
readable home is reported at start-up, and ``secure_home`` tightens it.

"Others cannot read" is shown for real: a child that drops to the ``nobody`` user tries
``cat`` and ``ls`` (the tests run as root, which reads everything).
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import embedded_env, free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

NOBODY = pwd.getpwnam("nobody")


def _login_shell_umask() -> None:
    os.umask(0o022)  # what a user's shell usually has: 0644 files, 0755 folders


def _as_nobody() -> None:
    os.setgid(NOBODY.pw_gid)
    os.setgroups([])
    os.setuid(NOBODY.pw_uid)


def run(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=ROOT,
        env=embedded_env(home),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        preexec_fn=_login_shell_umask,
    )


def manage(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(home, sys.executable, "manage.py", *args)


def nobody_can_read(path: Path) -> bool:
    """Whether user ``nobody`` can read the file (``cat``) or list the folder (``ls``)."""
    argv = ["ls", str(path)] if path.is_dir() else ["cat", str(path)]
    done = subprocess.run(argv, capture_output=True, timeout=30, check=False, preexec_fn=_as_nobody)
    return done.returncode == 0


def readable_by_others(home: Path) -> list[str]:
    """Every entry under ``home`` (itself included) giving group or other any bit."""
    found = []
    for path in [home, *home.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            found.append(f"{stat.S_IMODE(mode):o} {path}")
    return found


@pytest.fixture
def open_parent() -> Iterator[Path]:
    """A folder every user may enter (like /home/alice at 0755): pytest's own tmp folders
    are 0700, which would hide a readable home from ``nobody`` anyway."""
    parent = Path(tempfile.mkdtemp(prefix="kc-home-", dir="/tmp"))
    parent.chmod(0o755)
    yield parent
    shutil.rmtree(parent, ignore_errors=True)


def test_the_nobody_probe_reads_a_readable_file(open_parent):
    # The control for every "nobody cannot read" below: the probe does read when allowed.
    probe = open_parent / "open.txt"
    probe.write_text("hello\n")
    probe.chmod(0o644)
    assert nobody_can_read(probe)
    assert nobody_can_read(open_parent)


def test_migrate_creates_a_home_only_its_owner_can_read(open_parent):
    home = open_parent / "home"  # created by the command itself

    done = manage(home, "migrate", "--noinput", "-v", "0")

    assert done.returncode == 0, done.stderr
    assert readable_by_others(home) == []
    database = home / "kirocrew.sqlite3"
    assert database.is_file()
    assert not nobody_can_read(home)
    # Even knowing the name: the folder is closed, and the file itself is 0600.
    assert not nobody_can_read(database)
    assert "home.W001" not in done.stderr


def test_a_server_writing_a_transcript_through_the_api_leaves_nothing_others_can_read(
    open_parent,
):
    home = open_parent / "home"
    assert manage(home, "migrate", "--noinput", "-v", "0").returncode == 0
    created = manage(home, "create_app", "runner", "-v", "0")
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip().splitlines()[-1]
    port = free_port()
    log = open_parent / "daphne.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "kirocrew_site.asgi:application",
            ],
            cwd=ROOT,
            env=embedded_env(home, KIROCREW_SUMMARY_MODEL="heuristic"),
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_login_shell_umask,
        )
    try:
        api = httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if api.get("/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert api.post("/api/chat/slots", json={"name": "private"}).status_code == 201
        base = "/api/chat/slots/private"
        assert api.post(f"{base}/turns", json={"content": "Add a login page."}).status_code == 201
        row = {"role": "assistant", "content": "Added /login with a form."}
        assert api.post(f"{base}/rows", json=row).status_code == 201
        ended = api.post(f"{base}/turns/end", json={"stop_reason": "end_turn"})
        assert ended.status_code == 200, ended.text
    finally:
        server.terminate()
        server.wait(timeout=20)
    transcripts = list((home / "sessions").glob("*.jsonl"))
    assert transcripts, sorted(home.rglob("*"))
    assert readable_by_others(home) == []
    assert not any(nobody_can_read(path) for path in transcripts)
    assert "home.W001" not in log.read_text()
    assert "secure_home" not in log.read_text()


@pytest.fixture
def readable_home(open_parent: Path) -> Path:
    """A home as earlier versions left it: 0755 folders, 0644 files."""
    home = open_parent / "home"
    assert manage(home, "migrate", "--noinput", "-v", "0").returncode == 0
    sessions = home / "sessions"
    (sessions / "dashboard_s1.jsonl").write_text('{"_type": "metadata"}\n')
    (sessions / "archive").mkdir()
    (sessions / "archive" / "dashboard_s1__1.jsonl").write_text("{}\n")
    for path in [home, *home.rglob("*")]:
        if path.name != "secret_key":  # a readable key stops the site (secret_key.py)
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert nobody_can_read(sessions / "dashboard_s1.jsonl")  # the exposure, for real
    return home


def test_a_command_warns_in_one_line_naming_the_home_and_the_fix(readable_home):
    done = manage(readable_home, "check")

    warnings = [line for line in done.stderr.splitlines() if "home.W001" in line]
    assert len(warnings) == 1, done.stderr
    assert str(readable_home) in warnings[0]
    assert "manage.py secure_home" in warnings[0]


def test_a_server_start_warns_in_one_line_naming_the_home_and_the_fix(readable_home):
    # daphne and WSGI servers run no system checks: importing the entry point says it.
    for module in ("kirocrew_site.asgi", "kirocrew_site.wsgi"):
        done = run(readable_home, sys.executable, "-c", f"import {module}")

        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stderr.splitlines() if "secure_home" in line]
        assert len(lines) == 1, (module, done.stderr)
        assert str(readable_home) in lines[0]
        assert "WARNING" in lines[0]


def test_secure_home_makes_every_entry_private_and_says_what_it_changed(readable_home):
    outside = readable_home.parent / "outside.txt"
    outside.write_text("not ours\n")
    outside.chmod(0o644)
    (readable_home / "sessions" / "link.jsonl").symlink_to(outside)

    done = manage(readable_home, "secure_home")

    assert done.returncode == 0, done.stderr
    assert readable_by_others(readable_home) == []
    assert not nobody_can_read(readable_home)
    assert not nobody_can_read(readable_home / "sessions" / "dashboard_s1.jsonl")
    # folders: home, sessions, archive; files: database, transcript, archive
    assert "3 folders and 3 files made private (0700/0600)" in done.stdout, done.stdout
    assert "1 skipped" in done.stdout
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a link is never followed
    again = manage(readable_home, "check")
    assert "home.W001" not in again.stderr
    assert "0 folders and 0 files made private" in manage(readable_home, "secure_home").stdout


def test_a_celery_worker_start_warns_in_one_line_naming_the_home_and_the_fix(readable_home):
    # The worker runs the system checks silently: its worker_init receiver says it.
    log = readable_home.parent / "celery.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "celery"),
                "-A",
                "kirocrew_site",
                "worker",
                "--pool",
                "solo",
                "-l",
                "info",
            ],
            cwd=ROOT,
            env=embedded_env(readable_home, CELERY_BROKER_URL="memory://localhost/"),
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_login_shell_umask,
        )
    try:
        deadline = time.monotonic() + 90
        while " ready." not in log.read_text():
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    lines = [line for line in log.read_text().splitlines() if "secure_home" in line]
    assert len(lines) == 1, log.read_text()
    assert str(readable_home) in lines[0]
