"""The panel says why each badge says what it says, and links to that row (issue 11, 5).

A real daphne process summarizes with the offline heuristic; Chromium shows the panel.
"""

from __future__ import annotations

import time
from typing import Any

from tests.browser.conftest import Server, open_session

FILLER = "Unrelated: explain what the {n}th line of the changelog means for users."


def test_evidence_shows_under_the_badge_and_links_to_its_row(page: Any, server: Server) -> None:
    slot = server.new_slot("evidence", "Parser fix with a test run")
    server.turn(
        slot,
        "Fix the parser in parse.py so it keeps rows with empty names",
        "I changed parse.py to keep rows with empty names.",
        ("tool_call", "pytest -q tests/test_parse.py"),
        ("tool_result", "5 passed in 0.12s"),
        stop="max_tokens",
    )
    # enough later rows that the tool row starts far out of view
    for n in range(1, 9):
        server.turn(slot, FILLER.format(n=n), "It lists a renamed option; nothing to do.\n" * 6)
    server.turn(
        slot,
        "Now add a --strict flag to the CLI in cli.py",
        "I added --strict to cli.py.",
        stop="max_tokens",
    )
    server.api("POST", f"/slots/{slot}/summary", expect=202)  # queued: read it when written
    body = summary_written(server, slot, covering=10)
    parser = next(i for i in body["intents"] if "parser" in i["title"].lower())
    assert parser["evidence"]["kind"] == "test_passed"
    stamp = parser["evidence"]["ts"]

    open_session(page, slot)
    panel = page.locator("#summary-panel")
    card = panel.locator("details.intent", has_text="Fix the parser")
    reason = card.locator("summary .evidence")
    reason.wait_for()
    assert reason.inner_text().startswith("Tests passed (turn 1)")
    assert "Tests passed." in reason.inner_text()
    # under the badge: below it on screen, in the same summary line. Measured in the page
    # on the panel as it is at each try: a live frame may re-render the panel, and a
    # detached element measures 0 (the wait fails after its timeout if it is never below).
    page.wait_for_function(
        """() => {
            const card = [...document.querySelectorAll("#summary-panel details.intent")]
                .find((d) => d.textContent.includes("Fix the parser"));
            const line = card && card.querySelector("summary");
            const badge = line && line.querySelector(".badge");
            const reason = line && line.querySelector(".evidence");
            if (!badge || !reason) return false;
            const [b, r] = [badge, reason].map((e) => e.getBoundingClientRect());
            return b.height > 0 && r.height > 0 && r.y > b.y;
        }"""
    )

    row = page.locator(f'#transcript li.row:has(time[datetime="{stamp}"])')
    assert row.count() == 1
    assert "5 passed" in row.inner_text() or row.locator("details").count() == 1
    page.locator("#transcript li.row").last.scroll_into_view_if_needed()
    assert not page.evaluate(
        """(ts) => { const r = document.querySelector(`#transcript time[datetime="${ts}"]`)
                     .closest("li.row").getBoundingClientRect();
                     return r.top >= 0 && r.bottom <= window.innerHeight; }""",
        stamp,
    )
    was_open = card.get_attribute("open")
    link = reason.locator("a.evidence-link")
    assert link.get_attribute("href") == "#turn-1"
    link.click()
    page.wait_for_function(
        """(ts) => { const row = document.querySelector(`#transcript time[datetime="${ts}"]`)
                       .closest("li.row");
                     const r = row.getBoundingClientRect();
                     return row.classList.contains("evidence-target")
                       && r.top >= 0 && r.top < window.innerHeight; }""",
        arg=stamp,
    )
    assert page.locator("#transcript li.row.evidence-target").count() == 1
    assert "5 passed" in row.inner_text()  # a folded tool row is opened
    assert card.get_attribute("open") == was_open  # the click did not toggle the card

    strict = panel.locator("details.intent", has_text="--strict")
    none = strict.locator("summary .evidence-none")
    assert none.inner_text() == "No test run or confirmation seen"
    assert strict.locator("summary .evidence a").count() == 0
    assert "Offline estimate" in panel.locator(".byline").inner_text()


def summary_written(server: Server, slot: str, *, covering: int) -> Any:
    """The GET body once a summary covering ``covering`` user turns is stored."""
    deadline = time.monotonic() + 60
    while True:
        body = server.api("GET", f"/slots/{slot}/summary", expect=200)
        if body["covers_through_turn"] == covering and body["generate_state"] == "ready":
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)
