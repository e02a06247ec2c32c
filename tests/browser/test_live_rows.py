"""The session page's rows after the server took over every rule (issue 10): live rows,
a revision of the running turn, gap buttons and links into gaps all arrive as markup the
server rendered, in a real Chromium against a real daphne, without a reload.
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Server, open_session
from tests.browser.test_long_session import IN_VIEW, TURNS, long_session, turns_shown


def cursors(page: Any) -> list[str]:
    found: list[str] = page.eval_on_selector_all(
        "#transcript li.row", "els => els.map(e => e.dataset.cursor)"
    )
    return found


def test_live_rows_revisions_and_gaps_on_a_long_session(page: Any, server: Server) -> None:
    slot = long_session(server, "live-long")
    open_session(page, slot)
    page.evaluate("window.__noReload = 1")
    assert turns_shown(page) == list(range(41, TURNS + 1))

    # A turn runs: its rows arrive live, numbered on from the whole session.
    server.api("POST", f"/slots/{slot}/turns", {"content": "Question 61, asked live."}, expect=201)
    page.locator(f"#turn-{TURNS + 1}").get_by_text("Question 61, asked live.").wait_for()
    expect(page.locator("#turn-count")).to_have_text(f"{TURNS + 1} turns")
    draft = server.api(
        "POST", f"/slots/{slot}/rows", {"role": "assistant", "content": "Draft answer."}, expect=201
    )["ts"]
    page.locator("#transcript li.row").last.get_by_text("Draft answer.").wait_for()

    # A revision re-renders the running turn in place: same rows, new text, no duplicates.
    server.api(
        "POST",
        f"/slots/{slot}/rows/{draft}/revisions",
        {"patch": {"content": "Final answer, revised."}},
        expect=201,
    )
    page.locator("#transcript li.row").last.get_by_text("Final answer, revised.").wait_for()
    expect(page.locator("#transcript")).not_to_contain_text("Draft answer.")
    assert turns_shown(page) == list(range(41, TURNS + 2))
    assert len(cursors(page)) == len(set(cursors(page)))

    # The gap's button: the server answers with the rows and the smaller gap.
    gap = page.locator("#transcript li.gap")
    gap.get_by_role("button", name="Load earlier turns").click()
    page.locator("#turn-21").wait_for(state="attached")
    expect(page.locator("#transcript li.gap")).to_contain_text("20 turns not loaded")

    # A link to a turn inside that gap: it and the turns after it come, the gap splits.
    page.evaluate("location.hash = '#turn-5'")
    page.locator("#turn-5").wait_for(state="attached")
    page.wait_for_function(IN_VIEW, arg="turn-5")
    assert turns_shown(page) == list(range(5, TURNS + 2))
    gaps = page.locator("#transcript li.gap")
    expect(gaps).to_have_count(1)
    expect(gaps.first).to_contain_text("4 turns not loaded")

    # Live rows still continue where the page ends, and the turn ends cleanly.
    server.api("POST", f"/slots/{slot}/rows", {"role": "assistant", "content": "One more."})
    page.locator("#transcript li.row").last.get_by_text("One more.").wait_for()
    server.api("POST", f"/slots/{slot}/turns/end", {"stop_reason": "cancelled"}, expect=200)
    server.api("POST", f"/slots/{slot}/turns", {"content": "Question 62."}, expect=201)
    page.locator(f"#turn-{TURNS + 2}").get_by_text("Question 62.").wait_for()
    expect(page.locator("#turn-count")).to_have_text(f"{TURNS + 2} turns")
    assert len(cursors(page)) == len(set(cursors(page)))
    assert all(re.fullmatch(r"[0-9T:.+-]+(#\d+)?", c) for c in cursors(page))
    assert page.evaluate("window.__noReload === 1")
