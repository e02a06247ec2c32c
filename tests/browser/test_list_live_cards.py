"""The sessions list updates a session's card in place when its socket frames arrive
(the server renders the card; the page swaps it in), instead of only offering
"New activity: refresh the list"."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import Server


def test_a_new_turn_updates_its_card_in_place(page: Any, server: Server) -> None:
    slot = server.new_slot("live-card", "Card that follows its session", turns=1)
    page.goto("/")
    page.locator('#live[data-live="on"]').wait_for()
    card = page.locator('li.session-card[data-slot="live-card"]')
    turns = card.locator("dt:text('Turns') + dd")
    assert turns.inner_text() == "1"
    page.evaluate("() => { window.__notReloaded = true; }")

    server.turn(slot, "One more: add a logout button.", "Added it to the header.")

    page.wait_for_function(
        """() => document.querySelector('li.session-card[data-slot="live-card"] dl dd')
                   ?.textContent.trim() === "2" """
    )
    assert page.evaluate("() => window.__notReloaded === true")  # swapped, not reloaded
    assert page.locator("#list-news").is_hidden()
