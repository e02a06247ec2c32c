"""An open page of the live demo follows a replay of the demo (``make run`` again, or
``manage.py demo``): the replay deletes ``live-demo`` and writes a new transcript under
the same slot, and the page resets itself to it instead of keeping the old one with a
"rewritten ... reload" note and failing every row fetch with 422."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import ADMIN_PASSWORD, ADMIN_USER, Server
from transcripts.core.keys import transcript_key_for_slot

SLOT = "live-demo"


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Its own server: the demo's samples and apps stay out of the shared one."""
    srv = Server(tmp_path_factory.mktemp("demo-home"))
    srv.manage("migrate", "--noinput", "-v", "0")
    srv.manage("createsuperuser", "--noinput")
    srv.start()
    yield srv
    srv.stop()


def replay(server: Server) -> None:
    server.manage("demo", "--url", server.url, "--pause", "0.05", "--wait", "30")


def first_row_ts(server: Server) -> str:
    rows = server.store.read_session(transcript_key_for_slot(SLOT)).rows
    return str(rows[0]["ts"])


def test_an_open_demo_page_resets_to_the_replayed_transcript(
    browser_context: Any, demo_server: Server
) -> None:
    # localhost, not 127.0.0.1: cookies ignore the port, and the shared server's login
    # cookie for 127.0.0.1 must not be this server's.
    base = f"http://localhost:{demo_server.port}"
    replay(demo_server)
    old_first = first_row_ts(demo_server)
    page = browser_context.new_page()
    refused: list[str] = []
    page.on("response", lambda r: refused.append(r.url) if r.status == 422 else None)
    try:
        page.goto(f"{base}/login/")
        page.get_by_label("Username").fill(ADMIN_USER)
        page.get_by_label("Password").fill(ADMIN_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{base}/")
        page.goto(f"{base}/s/{SLOT}/")
        page.locator('#live[data-live="on"]').wait_for()
        assert page.locator("#transcript li.row").first.get_attribute("data-cursor") == old_first

        replay(demo_server)  # while the page is open
        new_first = first_row_ts(demo_server)
        rows = len(demo_server.store.read_session(transcript_key_for_slot(SLOT)).rows)

        page.wait_for_function(
            """([first, count]) => {
                const shown = document.querySelectorAll("#transcript li.row");
                return shown.length === count && shown[0].dataset.cursor === first;
            }""",
            arg=[new_first, rows],
        )
        page.locator('#live[data-live="on"]').wait_for()
        assert new_first != old_first
        assert page.locator("#transcript-note").is_hidden()
        assert page.locator("#turn-count").inner_text() == "5 turns"
        # The page stopped reading the old transcript at its first refusal.
        assert len(refused) <= 1, refused
    finally:
        page.close()
