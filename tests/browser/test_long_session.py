"""A long session in a real Chromium: it opens at its end, earlier turns load by a button,
and a link to a turn that is not loaded yet loads it and scrolls to it."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Server, open_session, screenshot
from transcripts.core.keys import transcript_key_for_slot

TURNS = 60  # the page opens at the last 20 (KIROCREW_SESSION_PAGE_TURNS' default)
IN_VIEW = """(id) => { const r = document.getElementById(id)?.getBoundingClientRect();
                       return Boolean(r) && r.bottom > 0 && r.top < window.innerHeight; }"""


def long_session(server: Server, name: str) -> str:
    server.api("POST", "/slots", {"name": name, "title": f"Long session {name}"}, expect=201)
    rows: list[dict[str, Any]] = []
    for n in range(1, TURNS + 1):
        rows.append({"role": "user", "content": f"Question number {n}: what about step {n}?"})
        rows.append({"role": "assistant", "content": f"Answer number {n}.\n\n" + "Detail. " * 40})
    server.store.append_rows(transcript_key_for_slot(name), rows)  # as an importer would
    return name


def turns_shown(page: Any) -> list[int]:
    ids = page.eval_on_selector_all("#transcript li[data-turn]", "els => els.map(e => e.id)")
    return [int(i.removeprefix("turn-")) for i in ids]


def test_a_long_session_opens_at_its_end_and_loads_earlier_turns(page: Any, server: Server) -> None:
    slot = long_session(server, "long-end")
    open_session(page, slot)
    assert turns_shown(page) == list(range(41, TURNS + 1))
    page.wait_for_function(IN_VIEW, arg=f"turn-{TURNS}")  # opened at its end
    gap = page.locator("#transcript li.gap")
    expect(gap).to_have_count(1)
    expect(gap).to_contain_text("40 turns not loaded")
    expect(page.locator("#turn-count")).to_have_text(f"{TURNS} turns")
    screenshot(page, "long-session-end")

    gap.get_by_role("button", name="Load earlier turns").click()
    page.locator("#turn-21").wait_for(state="attached")
    assert turns_shown(page) == list(range(21, TURNS + 1))
    expect(gap).to_contain_text("20 turns not loaded")
    page.locator("#transcript li.gap button").click()
    page.locator("#turn-1").wait_for(state="attached")
    assert turns_shown(page) == list(range(1, TURNS + 1))
    expect(page.locator("#transcript li.gap")).to_have_count(0)


def test_a_link_into_an_unloaded_turn_loads_it(page: Any, server: Server) -> None:
    slot = long_session(server, "long-link")
    page.goto(f"/s/{slot}/#turn-3")
    page.locator("#turn-3").wait_for(state="attached")
    page.wait_for_function(IN_VIEW, arg="turn-3")
    expect(page.locator("#turn-3")).to_contain_text("Question number 3:")
    # Turns 3-22 came; turns 1-2 and 23-40 are gaps with their own buttons.
    assert turns_shown(page) == [*range(3, 23), *range(41, TURNS + 1)]
    gaps = page.locator("#transcript li.gap")
    expect(gaps).to_have_count(2)
    expect(gaps.nth(0)).to_contain_text("2 turns not loaded")
    expect(gaps.nth(1)).to_contain_text("18 turns not loaded")
    screenshot(page, "long-session-turn-link")

    # A link clicked on the page (a summary's "turn 30") into the other gap.
    page.evaluate("location.hash = '#turn-30'")
    page.locator("#turn-30").wait_for(state="attached")
    page.wait_for_function(IN_VIEW, arg="turn-30")
    assert turns_shown(page) == [*range(3, 23), *range(30, TURNS + 1)]
    gaps.nth(1).get_by_role("button").click()
    page.locator("#turn-23").wait_for(state="attached")
    gaps.first.get_by_role("button").click()
    page.locator("#turn-1").wait_for(state="attached")
    assert turns_shown(page) == list(range(1, TURNS + 1))
    expect(page.locator("#transcript li.gap")).to_have_count(0)
