"""Intent cards keep inside the summary panel when a title, a progress line or a next
step holds a long unbroken word (a file path, a URL): no card wider than its panel."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import Server, intent, open_session

LONG_PATH = "kirocrew_site/dashboard/management/commands/" + "very_long_module_name_" * 6 + ".py"


def test_intent_cards_wrap_long_paths_inside_the_panel(page: Any, server: Server) -> None:
    slot = server.new_slot("long-paths", "Long paths", turns=2)
    server.write_summary(
        slot,
        [
            intent(
                f"Fix {LONG_PATH}",
                "needs-you",
                [[1, 2]],
                progress=[f"Edited `{LONG_PATH}` and {LONG_PATH}"],
                next_steps=[{"what": f"Run pytest on {LONG_PATH}", "why": "", "expect": ""}],
            )
        ],
        user_turns=2,
    )
    open_session(page, slot)
    card = page.locator("#summary-panel details.intent").first
    assert card.get_attribute("open") is not None  # the body is measured too

    overflowing = page.evaluate(
        """() => [document.querySelector("#summary-panel"),
                  ...document.querySelectorAll("#summary-panel details.intent, "
                    + "#summary-panel details.intent *")]
            .filter((el) => el.scrollWidth > el.clientWidth && el.clientWidth > 0)
            .map((el) => `${el.tagName}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`)"""
    )
    assert overflowing == []
