"""Refusals on a real daphne: a malformed multipart body gets the API's JSON envelope (it
was a bare 400 from Twisted, before the application saw the request), and a refused page
(403) is one log line, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import embedded_env, free_port, manage

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

# A dashboard login without the login form: a user, and a session for it (stdout: its key).
_LOGIN = """
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
user = get_user_model().objects.create_user("walt", password="x" * 12)
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "kirocrew_site.dashboard.throttle.ThrottledModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""

BROKEN_BODIES = [
    ("multipart/form-data; boundary=xx", b"garbage"),
    ("multipart/form-data", b"garbage"),
    (
        "multipart/form-data; boundary=xx",
        b'--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\nv',
    ),
]


@dataclass
class Server:
    url: str
    log: Path
    token: str
    session_key: str


def _manage(home: Path, *args: str) -> str:
    """The last line ``manage.py <args>`` printed (a token, a key)."""
    return manage(embedded_env(home), *args).strip().rpartition("\n")[2]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("refusals") / "home"
    _manage(home, "migrate", "--noinput", "-v", "0")
    token = _manage(home, "create_app", "runner", "-v", "0")
    session_key = _manage(home, "shell", "-c", _LOGIN)
    port = free_port()
    log = home.parent / "daphne.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
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
            env=embedded_env(home),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/login/", timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        yield Server(url, log, token, session_key)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize(("content_type", "body"), BROKEN_BODIES)
@pytest.mark.parametrize("who", ["app", "anonymous"])
def test_a_malformed_multipart_body_gets_the_json_envelope(server, who, content_type, body):
    headers = {"Content-Type": content_type}
    if who == "app":
        headers["Authorization"] = f"Bearer {server.token}"

    response = httpx.post(f"{server.url}/api/chat/slots", content=body, headers=headers)

    expected = 400 if who == "app" else 401
    assert response.status_code == expected, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert set(response.json()) == {"error", "code"}


def test_a_malformed_multipart_body_from_a_dashboard_login_gets_the_json_envelope(server):
    response = httpx.post(
        f"{server.url}/api/chat/slots",
        content=b"garbage",
        headers={"Content-Type": "multipart/form-data; boundary=xx"},
        cookies={"sessionid": server.session_key},
    )

    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert set(response.json()) == {"error", "code"}


def test_a_refused_page_logs_one_line_per_request_and_no_traceback(server):
    before = server.log.read_text().splitlines()
    with httpx.Client(base_url=server.url, cookies={"sessionid": server.session_key}) as client:
        for _ in range(10):
            assert client.get("/settings/").status_code == 403  # a login, not staff

    # Daphne's access line for each request comes after the application's own lines.
    deadline = time.monotonic() + 30
    while True:
        added = server.log.read_text().splitlines()[len(before) :]
        if sum('"GET /settings/" 403' in line for line in added) == 10:
            break
        assert time.monotonic() < deadline, "\n".join(added[-20:])
        time.sleep(0.05)
    assert "Traceback" not in "\n".join(added)
    app_lines = [line for line in added if '"GET /settings/"' not in line]
    assert len(app_lines) <= 10, "\n".join(added[:40])
