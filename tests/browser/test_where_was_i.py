"""Where was I: the project page and the session's intent timeline, in Chromium.

A real daphne process; the project comes from an imported Claude Code session (its cwd),
run through ``import_transcripts`` in its own process as a person would. The summaries are
sidecars written as a worker writes them; a summary POST answers "current" for them and
restores the mirror the project page reads.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import DESKTOP, PHONE, Server, intent, open_session, screenshot

SHOP = "/home/dev/where-shop"
SESSION_ID = "7d1e2f30-4a5b-4c6d-8e9f-a0b1c2d3e4f5"
ASKS = [
    "Add a refund endpoint to the shop API",
    "Write tests for the refund endpoint",
    "Pick a queue for the refund emails",
    "Rename the cart module to basket",
    "Ship the refund flow to staging",
]


def claude_session(folder: Path) -> Path:
    """A Claude Code session file of five turns run in ``SHOP``."""
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for n, ask in enumerate(ASKS, start=1):
        for role, text in (("user", ask), ("assistant", f"Done: {ask.lower()}.")):
            uuid = f"{role[0]}{n}"
            message: dict[str, Any] = (
                {"role": role, "content": text}
                if role == "user"
                else {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                }
            )
            lines.append(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "userType": "external",
                    "cwd": SHOP,
                    "sessionId": SESSION_ID,
                    "version": "2.1.1",
                    "type": role,
                    "uuid": uuid,
                    "timestamp": f"2026-12-01T10:{n:02d}:{0 if role == 'user' else 30:02d}.000Z",
                    "message": message,
                }
            )
            parent = uuid
    target = folder / "-home-dev-where-shop" / f"{SESSION_ID}.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return target


def settle(server: Server, slot: str) -> None:
    """Until no pass for ``slot`` is queued or running (GET: ``generate_state`` ready)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = server.api("GET", f"/slots/{slot}/summary", expect=200)
        if body.get("generate_state") != "generating":
            return
        time.sleep(0.2)
    raise AssertionError(f"{slot}: a summary pass never finished")


def mirrored(server: Server, slot: str, titles: list[str]) -> None:
    """A forced pass over the sidecar written for the transcript as it is mirrors it (the
    POST queues it: 202); the GET then reads our intents."""
    server.api("POST", f"/slots/{slot}/summary", expect=202)
    settle(server, slot)
    body = server.api("GET", f"/slots/{slot}/summary", expect=200)
    assert [i["title"] for i in body["intents"]] == titles


def store_summary(server: Server, slot: str, intents: list[dict[str, Any]], turns: int) -> None:
    """Our summary as the session page's stored one (the sidecar it reads)."""
    settle(server, slot)  # the turns' own passes are over: nothing overwrites ours
    server.write_summary(slot, intents, user_turns=turns)
    mirrored(server, slot, [i["title"] for i in intents])


@pytest.fixture(scope="module")
def shop_slot(server: Server, tmp_path_factory: pytest.TempPathFactory) -> str:
    source = claude_session(tmp_path_factory.mktemp("claude-projects"))
    # Imported with summaries off, so the only summary this session ever has is ours.
    server.set_enabled(False)
    try:
        server.manage(
            "import_transcripts", "--format", "claude-code", "--app", "browser", str(source)
        )
    finally:
        server.set_enabled(True)
    slots = server.api("GET", "/slots?limit=200")["slots"]
    (slot,) = [str(s["name"]) for s in slots if s.get("project") == SHOP]
    intents = [
        intent("Ship the refund flow", "needs-you", [[5, 5]]),
        intent("Pick a queue for the refund emails", "in-progress", [[3, 3]]),
        intent("Sketch the refund API", "done", [[1, 2]]),
    ]
    # An agent import's slot is named by its transcript key.
    server.write_summary(slot, intents, user_turns=5, key=slot)
    mirrored(server, slot, [i["title"] for i in intents])
    return slot


def test_the_project_page_lists_an_open_intent_that_opens_its_turn(
    page: Any, server: Server, shop_slot: str
) -> None:
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Projects").click()
    page.wait_for_url("**/projects/")
    card = page.locator("li.project-card", has_text="where-shop")
    assert "1 Needs you" in card.inner_text()
    assert "2 open" in card.inner_text()
    card.get_by_role("link").click()
    page.wait_for_url("**/project/?path=*")

    items = page.locator("#open-items li.open-item")
    titles = [t.strip() for t in items.locator("h3 a").all_inner_texts()]
    assert titles == ["Ship the refund flow", "Pick a queue for the refund emails"]
    assert "Sketch the refund API" not in page.locator("#open-items").inner_text()  # done
    screenshot(page, "project-page")

    items.locator("a", has_text="Pick a queue").click()
    page.wait_for_url(f"**/s/{shop_slot}/#turn-3")
    turn = page.locator("#turn-3")
    turn.wait_for()
    assert ASKS[2] in turn.inner_text()
    page.wait_for_function(
        """() => { const r = document.getElementById("turn-3").getBoundingClientRect();
                   return r.top >= 0 && r.top < window.innerHeight; }"""
    )


def fits(page: Any) -> bool:
    return bool(
        page.evaluate(
            """() => { const t = document.getElementById("intent-timeline");
                       return document.documentElement.scrollWidth <= window.innerWidth
                         && t.scrollWidth <= t.clientWidth; }"""
        )
    )


@pytest.fixture(scope="module")
def multi_slot(server: Server) -> str:
    slot = server.new_slot("where-timeline", "Four intents over 24 turns", turns=24)
    store_summary(
        server,
        slot,
        [
            intent("Polish the release", "in-progress", [[21, 24]]),
            intent("Fix the flaky login test", "needs-you", [[7, 9]]),
            intent("Refactor the session store", "done", [[5, 14]]),
            intent("Set up the project", "in-progress", [[1, 4], [18, 20]]),
        ],
        turns=24,
    )
    return slot


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_timeline_draws_a_bar_per_range_without_overflow_and_a_bar_opens_its_turn(
    page: Any, server: Server, multi_slot: str, viewport: Any
) -> None:
    page.set_viewport_size(viewport)
    open_session(page, multi_slot)
    timeline = page.locator("#intent-timeline")
    timeline.wait_for()
    lanes = timeline.locator("li.timeline-lane")
    assert lanes.count() == 4
    assert timeline.locator("rect.tl-bar").count() == 5
    assert timeline.locator("rect.tl-dormant").count() == 1
    # Drawn, not collapsed: every bar has a visible size, inside the lane's width.
    for index in range(5):
        box = timeline.locator("rect.tl-bar").nth(index).bounding_box()
        assert box is not None
        assert box["width"] > 3
        assert box["height"] > 3
    assert fits(page)
    timeline.scroll_into_view_if_needed()
    screenshot(page, f"timeline-{viewport['width']}")

    # The bar of turns 1-4 (in the gap before the page's last 20 turns): hovering names
    # it; clicking loads those turns and lands on turn 1.
    first = timeline.locator('a.tl-link[href="#turn-1"]')
    assert "Set up the project" in (first.locator("title").text_content() or "")
    assert page.locator("#turn-1").count() == 0
    first.locator("rect").click()
    page.wait_for_url("**#turn-1")
    page.locator("#turn-1").wait_for()
    page.wait_for_function(
        """() => { const r = document.getElementById("turn-1").getBoundingClientRect();
                   return r.top >= 0 && r.top < window.innerHeight; }"""
    )
    assert "bug number 1 " in page.locator("#turn-1").inner_text()


def test_the_timeline_follows_a_new_summary_without_a_reload(page: Any, server: Server) -> None:
    slot = server.new_slot("where-live", "Timeline that changes", turns=2)
    store_summary(server, slot, [intent("First plan", "in-progress", [[1, 2]])], turns=2)
    open_session(page, slot)
    timeline = page.locator("#intent-timeline")
    assert timeline.locator("rect.tl-bar").count() == 1
    page.evaluate("document.getElementById('intent-timeline').dataset.marker = 'old'")

    # Another turn: the pass stores a new summary and its frame reaches the page.
    server.turn(slot, "Also add a logout button to the header, please.", "Added it.")
    page.wait_for_function(
        """() => { const t = document.getElementById("intent-timeline");
                   return t && !t.dataset.marker
                     && !t.textContent.includes("First plan"); }"""
    )
    assert page.locator("#intent-timeline svg.timeline-track").count() >= 1
