"""The demo's live replay through the running server's HTTP API (so its frames reach the
open dashboard), and ``make run``'s port check (``python -m kirocrew_site.demo check-port
HOST PORT``): a busy port stops it before the demo's token is sent to whatever listens.
"""

from __future__ import annotations

import errno
import json
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "transcripts" / "sample_sessions"
REPLAY_SLOT = "live-demo"
REPLAY_APP = "demo-replay"


Row = str | dict[str, Any]  # an assistant reply, or a whole row (a tool call or its result)


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: tuple[Row, ...]


def ran(command: str, output: str) -> tuple[Row, Row]:
    """A shell command that succeeded and its result: the summary's evidence (a reply that
    only says "tests pass" verifies nothing)."""
    return (
        {"role": "tool_call", "content": command, "meta": {"tool": "bash"}},
        {"role": "tool_result", "content": output, "meta": {"tool": "bash", "exit_code": 0}},
    )


def edited(path: str) -> Row:
    return {"role": "tool_call", "content": f"Edit {path}", "meta": {"tool": "Edit"}}


REPLAY: tuple[Turn, ...] = (
    Turn(
        "The CSV export drops rows whose customer name has accents. Can you fix it?",
        (
            edited("shop/export.py"),
            edited("tests/test_export.py"),
            "Found it: the exporter opened the file with the platform default encoding "
            "and skipped rows that failed to encode. Switched to UTF-8 with a BOM so "
            "Excel reads it, and added a regression test with 'Zoë' and 'Łukasz'.",
            *ran("pytest -q", "48 passed in 2.31s"),
            "Ran pytest: 48 passed, 0 failed.",
        ),
    ),
    Turn(
        "Great, commit it.",
        (
            *ran(
                "git commit -am 'Fix accented names in CSV export'",
                "[main 3f2a1c9] Fix accented names in CSV export\n 2 files changed",
            ),
            "Committed as 3f2a1c9 'Fix accented names in CSV export'.",
        ),
    ),
    Turn(
        "Now let's add a --since flag to the export command so I can export only recent orders.",
        (
            edited("shop/management/commands/export_orders.py"),
            "Added --since (an ISO date) to `manage.py export_orders`; it filters on "
            "created_at. I have not run the tests for this yet.",
        ),
    ),
    Turn(
        "Remember: always run `make lint` after changing the CLI, CI rejects it otherwise.",
        (
            *ran("make lint", "ruff check .\nAll checks passed!"),
            *ran("pytest -q", "51 passed in 2.48s"),
            "Noted. Ran make lint: clean. Ran pytest: 51 passed.",
        ),
    ),
    Turn(
        "How hard would it be to also stream the export instead of building it in memory? "
        "Don't change anything yet.",
        (
            "Moderate: the writer already yields rows; the view would return a "
            "StreamingHttpResponse. About an hour with tests. Options: (a) stream always, "
            "(b) stream above 10k rows.",
        ),
    ),
)


class DemoError(Exception):
    """A call the replay needed failed: one line for the person, never a traceback."""


class DemoClient:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token

    def post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(  # noqa: S310 - the URL is the local server
            self.base_url + path,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise DemoError(f"POST {path} answered {exc.code} {error_text(exc)}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DemoError(f"POST {path} failed: {reason}") from None
        return json.loads(raw) if raw else None


def error_text(exc: urllib.error.HTTPError) -> str:
    """The API's ``{"error", "code"}`` envelope as ``code (error)``, else the HTTP reason."""
    try:
        body = json.loads(exc.read() or b"{}")
    except (ValueError, OSError):
        body = {}
    if isinstance(body, dict) and body.get("code"):
        return f"{body['code']} ({body.get('error', '')})"
    return str(exc.reason)


API_TITLE = "Kiro Crew sessions"  # the OpenAPI title of this site's API (kirocrew_site/api.py)


def wait_for_server(base_url: str, timeout: float) -> bool:
    """True once this site's API answers; False when nothing did in time; DemoError when
    another program answers (the replay would send it the app's token)."""
    url = base_url.rstrip("/") + "/api/openapi.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310
                raw = response.read(1_000_000)
        except urllib.error.HTTPError as exc:
            if exc.code >= 500:  # perhaps still starting: ask again
                time.sleep(0.5)
                continue
            raise DemoError(not_ours(base_url, f"answered {exc.code}", exc.code)) from None
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
            continue
        if api_title(raw) != API_TITLE:
            raise DemoError(not_ours(base_url, "answered with another API"))
        return True
    return False


def api_title(raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        return ""
    info = body.get("info") if isinstance(body, dict) else None
    return str(info.get("title", "")) if isinstance(info, dict) else ""


def not_ours(base_url: str, what: str, code: int = 200) -> str:
    reason = "that is not Kiro Crew, so another program holds this port"
    if code == 400:  # also what Kiro Crew says to a Host header outside ALLOWED_HOSTS
        reason = "another program holds this port, or DJANGO_ALLOWED_HOSTS lacks this host"
    return (
        f"{base_url} {what} to GET /api/openapi.json: {reason} (nothing was sent to it); "
        "run on a free port, e.g. `make run PORT=8001`"
    )


def replay(client: DemoClient, *, pause: float, say: Callable[[str], None]) -> None:
    """Create the live slot (the caller removed an earlier run's) and play the turns."""
    client.post("/api/chat/slots", {"name": REPLAY_SLOT, "title": "CSV export fixes"})
    say(f"replaying {len(REPLAY)} turns into slot {REPLAY_SLOT!r}")
    for number, turn in enumerate(REPLAY, start=1):
        client.post(f"/api/chat/slots/{REPLAY_SLOT}/turns", {"content": turn.user})
        for row in turn.assistant:
            time.sleep(pause)
            body = {"role": "assistant", "content": row} if isinstance(row, str) else row
            client.post(f"/api/chat/slots/{REPLAY_SLOT}/rows", body)
        client.post(f"/api/chat/slots/{REPLAY_SLOT}/turns/end", {"stop_reason": "end_turn"})
        say(f"turn {number} of {len(REPLAY)} done")
        time.sleep(pause)


def login_box(lines: list[str]) -> str:
    width = max(len(line) for line in lines)
    rule = "+" + "-" * (width + 2) + "+"
    return "\n".join([rule, *(f"| {line.ljust(width)} |" for line in lines), rule])


IN_USE = "is in use (another program listens there)"


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (None: it can), found by binding it
    with SO_REUSEADDR, as the server does (closing connections of an earlier run are free).
    """
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as exc:
        return f"cannot use HOST {host!r}: {exc}"
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} {IN_USE}"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def check_port(host: str, port_text: str) -> int:
    """0 when free, else one line and 1 (2: usage)."""
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        sys.stderr.write(f"make run: PORT must be a number from 1 to 65535, not {port_text!r}\n")
        return 2
    port = int(port_text)
    problem = port_problem(host, port)
    if problem is None:
        return 0
    advice = ""
    if problem.endswith(IN_USE):
        candidates = range(port + 1, min(port + 21, 65536))
        spare = next((p for p in candidates if port_problem(host, p) is None), None)
        advice = f"; try: make run PORT={spare}" if spare else "; choose one: make run PORT=N"
    sys.stderr.write(f"make run: {problem}{advice}\n")
    return 1


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "check-port":
        sys.stderr.write("usage: python -m kirocrew_site.demo check-port HOST PORT\n")
        sys.exit(2)
    sys.exit(check_port(sys.argv[2], sys.argv[3]))
