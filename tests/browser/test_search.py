"""The sessions list's search in Chromium: a highlighted snippet of what was said, whose
link opens the session at that turn, even when the turn is not among those the page
opens with (the page loads it on demand)."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import Server, screenshot


def test_a_search_shows_a_highlighted_snippet_that_opens_its_turn(
    page: Any, server: Server
) -> None:
    slot = server.new_slot("search-okapi", "Storage planning")
    server.turn(slot, "Which bucket layout do we use?", "Flat layout for now.")
    server.turn(
        slot,
        "Where do the okapi reports go?",
        'We decided: okapi reports go to cold storage <img src=x onerror="window.pwned=1">.',
    )
    for n in range(3, 26):  # past the 20 turns the session page opens with
        server.turn(slot, f"Unrelated question {n}", f"Unrelated answer {n}.")

    page.goto("/")
    page.get_by_label("Search").fill("okapi decided")
    page.get_by_role("button", name="Filter").click()
    page.locator("#search-hits li.hit").first.wait_for()
    hits = page.locator("#search-hits li.hit-row")  # (the summary may match too)
    assert hits.count() == 1
    hit = hits.first
    assert hit.locator("mark").all_inner_texts() == ["decided", "okapi"]
    assert 'onerror="window.pwned=1">' in hit.locator(".snippet").inner_text()
    assert hit.locator(".snippet img").count() == 0
    assert page.evaluate("window.pwned") is None
    screenshot(page, "search-hits")

    link = hit.locator("a.hit-link")
    assert link.get_attribute("href") == f"/s/{slot}/#turn-2"
    link.click()
    page.wait_for_url(f"**/s/{slot}/#turn-2")
    turn = page.locator("#turn-2")
    turn.wait_for()  # not on the page as it opened: loaded from the gap
    assert "okapi reports go" in turn.inner_text()
    page.wait_for_function(
        """() => { const r = document.getElementById("turn-2").getBoundingClientRect();
                   return r.top >= 0 && r.top < window.innerHeight; }"""
    )
