"""Browser tests: a real daphne process and Debian's Chromium driven by Playwright.

The in-memory channel layer only carries pushes inside ONE process, so every state
change that must reach the browser goes through the server's HTTP API (an app token);
only what a test must craft (a summary sidecar, the in-flight marker) is written to
disk or the database directly, exactly as another process would.

Skipped, with the reason, when /usr/bin/chromium is missing (CI installs it).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import ViewportSize

from summaries.core.sidecar import INTENTS, write_guarded
from tests.conftest import FIXTURES_DIR
from transcripts.core.keys import transcript_key_for_slot
from transcripts.core.store import TranscriptStore

logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
ADMIN_USER, ADMIN_PASSWORD = "admin", "browser-test-pw-1"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    skip = pytest.mark.skip(
        reason="browser tests need Debian's Chromium at /usr/bin/chromium "
        "(apt-get install -y chromium); CI installs it"
    )
    required = os.environ.get("KIROCREW_REQUIRE_BROWSER", "") not in {"", "0"}
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            if not CHROMIUM.exists() and not required:
                item.add_marker(skip)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """daphne serving kirocrew_site on one port, with its own KIROCREW_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home / "daphne.log"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("KIROCREW_", "DJANGO_", "DATABASE_URL", "REDIS_URL", "CELERY_"))
        }
        self.env.update(
            KIROCREW_HOME=str(home),
            KIROCREW_TRANSCRIPT_FSYNC="never",
            KIROCREW_SUMMARY_MODEL="heuristic",
            DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            DJANGO_SUPERUSER_USERNAME=ADMIN_USER,
            DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD,
            DJANGO_SUPERUSER_EMAIL="admin@example.invalid",
            PYTHONUNBUFFERED="1",
        )
        self.store = TranscriptStore(home / "sessions", fsync="never")
        self.token = ""

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"manage.py {args}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def start(self) -> None:
        # The running interpreter's daphne: the suite works from any environment.
        command = [sys.executable, "-m", "daphne"]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    *command,
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "kirocrew_site.asgi:application",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daphne exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/login/", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"daphne did not answer: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    # ------------------------------------------------------------- the app's API
    def api(self, method: str, path: str, body: Any = None, expect: int | None = None) -> Any:
        response = httpx.request(
            method,
            f"{self.url}/api/chat{path}",
            json=body,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        )
        if expect is not None:
            assert response.status_code == expect, response.text
        return response.json() if response.content else None

    def new_slot(self, name: str, title: str, turns: int = 0) -> str:
        self.api("POST", "/slots", {"name": name, "title": title}, expect=201)
        for i in range(turns):
            self.turn(
                name,
                f"Please fix bug number {i + 1} in the login flow (ticket LOGIN-{101 + i}).",
                f"Fixed bug {i + 1}: the session cookie was read before it was set. Tests pass.",
                stop="max_tokens",
            )
        return name

    def turn(
        self, slot: str, ask: str, *rows: str | tuple[str, str], stop: str = "end_turn"
    ) -> None:
        """One turn: the person's message, then rows (a bare string is the assistant's)."""
        self.api("POST", f"/slots/{slot}/turns", {"content": ask}, expect=201)
        for row in rows:
            role, content = ("assistant", row) if isinstance(row, str) else row
            self.api("POST", f"/slots/{slot}/rows", {"role": role, "content": content}, expect=201)
        self.api("POST", f"/slots/{slot}/turns/end", {"stop_reason": stop}, expect=200)

    # ------------------------------------------------------------- what other processes do
    def write_summary(self, slot: str, intents: list[dict[str, Any]], **extra: Any) -> None:
        """A sidecar for the transcript exactly as it is now (what a worker would write);
        ``key=`` names a transcript whose key is not ``dashboard:<slot>`` (an import's)."""
        key = extra.pop("key", None) or transcript_key_for_slot(slot)
        if self.proc is not None:  # a turn end's own pass, still queued, would overwrite ours
            self.settle(slot)
        identity = self.store.identity(key)
        assert identity is not None
        payload = {
            "intents": intents,
            "constraints": extra.pop("constraints", []),
            "generated_at": extra.pop("generated_at", time.time() - 300),
            "user_turns": extra.pop("user_turns", 2),
            "last_activity": None,
            "model": extra.pop("model", "test-model"),
            "duration_ms": 5,
        }
        assert write_guarded(self.store, key, INTENTS, payload, sig=identity.sig, gen=identity.gen)

    def settle(self, slot: str) -> None:
        """Until no summary pass is queued or running for ``slot`` (the passes run in
        worker processes, after the turn end answered)."""
        deadline = time.monotonic() + 60
        while self.api("GET", f"/slots/{slot}/summary").get("generate_state") == "generating":
            assert time.monotonic() < deadline, f"{slot}: a summary pass never finished"
            time.sleep(0.1)

    def set_in_flight(self, slot: str, on: bool) -> None:
        with sqlite3.connect(self.home / "kirocrew.sqlite3", timeout=10) as db:
            # summaries' own row for the slot (SummaryState), created if the slot has none.
            db.execute(
                "INSERT INTO summaries_summarystate (slot_id, turn_mark) "
                "SELECT id, 0 FROM transcripts_slot WHERE name = ? ON CONFLICT DO NOTHING",
                (slot,),
            )
            db.execute(
                "UPDATE summaries_summarystate SET in_flight_until = ? "
                "WHERE slot_id = (SELECT id FROM transcripts_slot WHERE name = ?)",
                ("2999-01-01 00:00:00" if on else None, slot),
            )

    def set_enabled(self, enabled: bool) -> None:
        path = self.home / "config.json"
        previous = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(json.dumps({"session_summary": {"enabled": enabled}}))
        stamp = max(time.time_ns(), previous + 1_000_000)
        os.utime(path, ns=(stamp, stamp))


def intent(title: str, state: str, ranges: list[list[int]], **fields: Any) -> dict[str, Any]:
    status = {"done": "completed", "needs-you": "completed", "dropped": "abandoned"}.get(
        state, "active"
    )
    return {
        "title": title,
        "initial_intent": fields.get("initial_intent", f"Get {title.lower()} done."),
        "progress": fields.get("progress", [f"{title}: first part finished."]),
        "next_steps": fields.get("next_steps", []),
        "ranges": ranges,
        "status": status,
        "verified": False if state == "needs-you" else (True if state == "done" else None),
        "state": state,
        "last_touched_turn": max(r[-1] for r in ranges),
        "origin_turn": fields.get("origin_turn"),
    }


# Package scope, not session: sync_playwright keeps an event loop running in the main
# thread while it lives, which breaks any asyncio test collected after these.
@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("kirocrew-home")
    srv = Server(home)
    srv.set_enabled(True)
    srv.manage("migrate", "--noinput", "-v", "0")
    srv.manage("createsuperuser", "--noinput")
    srv.token = srv.manage("create_app", "browser").strip().splitlines()[-1]
    srv.manage("import_transcripts", str(FIXTURES_DIR), "--app", "browser", "-v", "0")
    srv.start()
    for slot in srv.api("GET", "/slots")["slots"]:
        srv.api("POST", f"/slots/{slot['name']}/summary")  # heuristic; a 409 is fine too
    yield srv
    srv.stop()


@pytest.fixture(scope="package")
def browser_context(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"KIROCREW_REQUIRE_BROWSER is set but {CHROMIUM} is missing")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=DESKTOP,
            base_url=server.url,
            locale="en-US",
        )
        context.set_default_timeout(15_000)
        yield context
        context.close()


def login(page: Any) -> None:
    page.goto("/login/")
    if "/login/" in page.url:
        page.get_by_label("Username").fill(ADMIN_USER)
        page.get_by_label("Password").fill(ADMIN_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url("**/")


@pytest.fixture
def page(browser_context: Any) -> Iterator[Any]:
    page = browser_context.new_page()
    page.set_viewport_size(DESKTOP)
    login(page)
    yield page
    page.close()


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def open_session(page: Any, slot: str) -> None:
    page.goto(f"/s/{slot}/")
    page.locator('#live[data-live="on"]').wait_for()
    page.locator("#summary-panel[data-synced]").wait_for(state="attached")  # the first resync
