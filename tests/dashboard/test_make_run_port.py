"""``make run`` on a port another program holds (fresh-eyes report, item 4): it stops before
starting anything with one line naming a free port, and the demo never sends its token to a
server that is not Kiro Crew."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kirocrew_site.demo import check_port, port_problem
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port this test listens on, as another program would."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_held_port_is_one_line_naming_a_free_one(
    held_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_port("127.0.0.1", str(held_port)) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"make run: port {held_port} on 127.0.0.1 is in use"), err
    assert len(err.splitlines()) == 1
    suggested = int(err.rsplit("make run PORT=", 1)[1])
    assert suggested != held_port
    assert port_problem("127.0.0.1", suggested) is None


def test_a_free_port_passes_and_a_bad_port_is_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = int(sock.getsockname()[1])
    assert check_port("127.0.0.1", str(free)) == 0
    assert capsys.readouterr().err == ""
    for bad in ("http", "0", "70000", "-1", ""):
        assert check_port("127.0.0.1", bad) == 2
        assert "PORT must be a number from 1 to 65535" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_on_a_held_port_stops_before_migrate(held_port: int, tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        # -o: never (re)build the venv here; PY: this interpreter.
        ["make", "-o", ".venv/.installed", "run", f"PORT={held_port}", f"PY={sys.executable}"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "KIROCREW_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert f"port {held_port} on 127.0.0.1 is in use" in done.stderr, done.stderr
    assert "make run PORT=" in done.stderr
    assert "migrate" not in done.stdout  # nothing ran after the check: no demo, no server
    assert time.monotonic() - started < 30


@pytest.fixture
def foreign_server(fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    """Some other local service: 404 for what it does not know, records every request."""
    fake_openai.default = Behaviour.raw(b"", status=404, content_type="text/plain")
    return fake_openai


@pytest.mark.django_db
def test_the_demo_sends_nothing_to_a_server_that_is_not_kiro_crew(
    store: Any, foreign_server: FakeOpenAIServer
) -> None:
    out = StringIO()
    url = f"http://127.0.0.1:{foreign_server.port}"
    with pytest.raises(CommandError) as info:
        call_command("demo", url=url, pause=0, wait=5, stdout=out, stderr=StringIO())

    assert info.value.returncode == 1
    message = str(info.value)
    assert "not Kiro Crew" in message
    assert "make run PORT=" in message
    seen = [(r.method, r.path, r.headers.get("authorization")) for r in foreign_server.requests]
    assert seen == [("GET", "/api/openapi.json", None)]  # no token, no POST
    assert "Password:" in out.getvalue()  # the one-time password is still shown
