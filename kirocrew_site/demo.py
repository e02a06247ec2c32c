"""The demo: sample sessions imported, then one session replayed live through the HTTP API.

The replay goes through the running server's API (not in-process services) because the
embedded profile's in-memory channel layer only reaches sockets inside the server's own
process: only requests the server handles can push frames to the open dashboard.
"""

from __future__ import annotations

import json
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


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: tuple[str, ...]


REPLAY: tuple[Turn, ...] = (
    Turn(
        "The CSV export drops rows whose customer name has accents. Can you fix it?",
        (
            "Found it: the exporter opened the file with the platform default encoding "
            "and skipped rows that failed to encode. Switched to UTF-8 with a BOM so "
            "Excel reads it, and added a regression test with 'Zoë' and 'Łukasz'.",
            "Ran pytest: 48 passed, 0 failed.",
        ),
    ),
    Turn(
        "Great, commit it.",
        ("Committed as 3f2a1c9 'Fix accented names in CSV export'.",),
    ),
    Turn(
        "Now let's add a --since flag to the export command so I can export only recent orders.",
        (
            "Added --since (an ISO date) to `manage.py export_orders`; it filters on "
            "created_at. I have not run the tests for this yet.",
        ),
    ),
    Turn(
        "Remember: always run `make lint` after changing the CLI, CI rejects it otherwise.",
        ("Noted. Ran make lint: clean. Ran pytest: 51 passed.",),
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

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(  # noqa: S310 - the URL is the local server
            self.base_url + path,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise DemoError(f"{method} {path} answered {exc.code} {error_text(exc)}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DemoError(f"{method} {path} failed: {reason}") from None
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


def wait_for_server(base_url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base_url.rstrip("/") + "/api/openapi.json", timeout=2).close()  # noqa: S310
            return True
        except urllib.error.HTTPError:
            return True  # it answered
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    return False


def replay(client: DemoClient, *, pause: float, say: Callable[[str], None]) -> None:
    """Create the live slot and play the scripted turns with pauses (DemoError on failure).

    The caller removes an earlier run's slot first (in-process, whoever owns it), so a
    re-run never meets a 409 here.
    """
    client.call("POST", "/api/chat/slots", {"name": REPLAY_SLOT, "title": "CSV export fixes"})
    say(f"replaying {len(REPLAY)} turns into slot {REPLAY_SLOT!r}")
    for number, turn in enumerate(REPLAY, start=1):
        client.call("POST", f"/api/chat/slots/{REPLAY_SLOT}/turns", {"content": turn.user})
        for text in turn.assistant:
            time.sleep(pause)
            client.call(
                "POST",
                f"/api/chat/slots/{REPLAY_SLOT}/rows",
                {"role": "assistant", "content": text},
            )
        client.call("POST", f"/api/chat/slots/{REPLAY_SLOT}/turns/end", {"stop_reason": "end_turn"})
        say(f"turn {number} of {len(REPLAY)} done")
        time.sleep(pause)


def login_box(lines: list[str]) -> str:
    """``lines`` framed, so the login stands out below the server's start-up output."""
    width = max(len(line) for line in lines)
    rule = "+" + "-" * (width + 2) + "+"
    return "\n".join([rule, *(f"| {line.ljust(width)} |" for line in lines), rule])
