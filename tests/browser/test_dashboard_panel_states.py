"""The dashboard in a real Chromium against a real daphne: login, the sessions list, the
session page, and every state of the summary panel."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import (
    ADMIN_PASSWORD,
    ADMIN_USER,
    DESKTOP,
    PHONE,
    Server,
    intent,
    open_session,
    screenshot,
)

SECRET = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0" * 2  # a key shape the redactor knows
CONVERSATION: list[tuple[Any, ...]] = [
    (
        "The CSV export drops every row whose name has an accent. Can you find out why?",
        ("tool_call", "grep -n 'open(' export/csv.py"),
        ("tool_result", "41:    with open(path, 'w', encoding='ascii', errors='ignore') as fh:"),
        "Found it: the writer opens the file as ASCII and silently drops what it cannot encode. "
        "Switched it to UTF-8 with a BOM for Excel and merged the fix.",
    ),
    (
        "Could we add a dark mode toggle at some point?",
        "Possible: the stylesheet needs colour variables first. I can sketch it after the export work.",
    ),
    (
        "The login test is flaky again, about one run in five.",
        ("tool_call", "pytest tests/test_login.py -q --count 50"),
        ("tool_result", "50 passed in 12.31s"),
        "The session fixture reused a cookie between runs. Fixed; 50 runs in a row are green.",
    ),
    (
        "Let's refactor the importer next: the parser is 600 lines.",
        "Started: header parsing now lives in importer/header.py. Rows are next.",
    ),
    (
        "Here is the staging key in case you need it.",
        f"Thanks, I did not need it; the key {SECRET} is not stored anywhere.",
    ),
    (
        "Forget dark mode for now. Back to the export: did the fix ship?",
        "It is merged, but the export suite has not run against it yet.",
    ),
]
STATE_INTENTS = [
    intent(
        "Fix the CSV export dropping accented names",
        "needs-you",
        [[1, 1], [6, 6]],
        origin_turn=1,
        initial_intent="The CSV export drops every row whose name has an accent.",
        progress=[
            "The writer now opens the file as UTF-8 with a BOM; the fix is merged.",
            "The export suite has not run against it yet.",
        ],
        next_steps=[
            {
                "what": "Run the export suite",
                "why": "the fix was merged unverified",
                "expect": "every row survives, accents included",
            },
            {"what": "Tell support the fix is out", "why": "", "expect": ""},
        ],
    ),
    intent(
        "Refactor the importer",
        "in-progress",
        [[4, 4]],
        origin_turn=3,
        initial_intent="Split the 600-line importer parser.",
        progress=["Header parsing moved to importer/header.py."],
        next_steps=[
            {"what": "Split out row parsing", "why": "", "expect": ""},
            {"what": "Add a fixture for a legacy file", "why": "", "expect": ""},
        ],
    ),
    intent(
        "Fix the flaky login test",
        "done",
        [[3, 3]],
        initial_intent="The login test fails about one run in five.",
        progress=["The session fixture no longer reuses a cookie; 50 runs green."],
    ),
    intent(
        "Dark mode toggle",
        "dropped",
        [[2, 2]],
        initial_intent="Add a dark mode toggle at some point.",
        progress=["Dropped at turn 6: not now."],
        next_steps=[{"what": "Never shown", "why": "", "expect": ""}],
    ),
]


def test_login_and_sessions_list(browser_context: Any, server: Server) -> None:
    page = browser_context.new_page()
    page.context.clear_cookies()
    page.goto("/")
    assert "/login/" in page.url
    screenshot(page, "login-desktop")
    page.get_by_label("Username").fill(ADMIN_USER)
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    page.get_by_label("Password").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/")
    cards = page.locator(".session-card")
    assert cards.count() >= 4
    assert page.locator(".session-card .badge").count() >= 1  # intent state chips
    page.locator('#live[data-live="on"]').wait_for()
    screenshot(page, "sessions-desktop")
    page.set_viewport_size(PHONE)
    screenshot(page, "sessions-phone")
    page.set_viewport_size(DESKTOP)

    page.get_by_label("Search", exact=True).fill("glob")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/?q=glob*")
    expect(page.locator(".session-card")).to_have_count(1)
    page.get_by_label("Search", exact=True).fill("no such title anywhere")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_text("No sessions match")).to_be_visible()
    page.close()


def test_session_page_transcript_panel_and_turn_links(page: Any, server: Server) -> None:
    page.goto("/")
    page.get_by_role("link", name="Fix empty-glob crash in list_sessions").click()
    page.locator('#live[data-live="on"]').wait_for()
    assert page.locator("#transcript li[id^=turn-]").count() >= 4
    panel = page.locator("#summary-panel")
    panel.locator("details.intent").first.wait_for()
    assert panel.locator("details.intent").first.get_attribute("open") is not None
    screenshot(page, "imported-session-desktop")
    page.set_viewport_size(PHONE)
    screenshot(page, "imported-session-phone")
    page.set_viewport_size(DESKTOP)

    link = panel.locator(".ranges a").last
    target = link.get_attribute("href")
    assert target
    assert target.startswith("#turn-")
    link.click()
    page.wait_for_function(
        """(id) => { const r = document.getElementById(id).getBoundingClientRect();
                     return r.top >= 0 && r.top < window.innerHeight; }""",
        arg=target[1:],
    )
    assert page.url.endswith(target)


def test_panel_renders_each_intent_state(page: Any, server: Server) -> None:
    slot = server.new_slot("states", "Export fix, importer and a flaky test")
    for ask, *rows in CONVERSATION:
        server.turn(slot, ask, *rows, stop="max_tokens")
    server.write_summary(
        slot,
        STATE_INTENTS,
        user_turns=6,
        constraints=["Run tests with -p no:cacheprovider", "Never push to main directly"],
    )
    open_session(page, slot)
    transcript = page.locator("#transcript")
    assert transcript.locator("li[id^=turn-]").count() == 6
    assert transcript.locator("mark.redacted").first.inner_text() == "[REDACTED: credential]"
    assert SECRET not in transcript.inner_text()
    assert transcript.locator(".row-tool details[open]").count() == 0  # tool rows collapsed

    panel = page.locator("#summary-panel")
    cards = panel.locator("details.intent")
    assert cards.count() == 4
    badges = [cards.nth(i).locator(".badge").inner_text() for i in range(4)]
    assert badges == ["Needs you", "Active", "Done", "Dropped"]
    assert cards.nth(0).get_attribute("open") is not None  # the first is open
    assert cards.nth(1).get_attribute("open") is None
    first = cards.nth(0)
    assert first.locator(".ranges").inner_text().startswith("turns 1, 6")
    assert "Resumed \u00d71" in first.inner_text()
    assert "You asked for" in first.inner_text()
    assert "Pivoted" not in first.inner_text()  # origin_turn 1 is where its first range starts
    assert "Where it stands" in first.inner_text()
    assert "Suggested next" in first.inner_text()
    assert "Why: the fix was merged unverified" in first.inner_text()

    triage = panel.locator(".triage")
    assert "Open items (4)" in triage.text_content()  # needs-you 2 + active 2; dropped excluded
    items = triage.locator("li")
    assert items.count() == 3
    assert items.nth(0).inner_text().startswith("Run the export suite")  # needs-you first
    assert "How this project works (2)" in panel.locator("details.notes").inner_text()
    assert "Written by test-model" in panel.locator(".byline").inner_text()
    assert panel.locator("#summary-stale").count() == 0
    screenshot(page, "session-desktop")
    page.emulate_media(color_scheme="dark")
    screenshot(page, "session-desktop-dark")
    page.emulate_media(color_scheme="light")
    page.set_viewport_size(PHONE)
    screenshot(page, "session-phone")
    page.set_viewport_size(DESKTOP)

    cards.nth(1).locator("summary").click()
    assert "Pivoted here from your question at turn 3" in cards.nth(1).inner_text()
    triage.get_by_role("button", name="+1 more").click()
    assert panel.locator(".triage li").count() == 4
    assert "Never shown" not in panel.locator(".triage").inner_text()
    cards.nth(1).locator(".pivot a").click()
    page.wait_for_url("**#turn-3")


def test_stale_banner_counts_newer_turns(page: Any, server: Server) -> None:
    slot = server.new_slot("stale", "Stale summary", turns=2)
    server.write_summary(slot, [intent("Old goal", "done", [[1, 2]])], user_turns=2)
    server.turn(slot, "One more thing: rename the flag.", "Renamed.", stop="max_tokens")
    open_session(page, slot)
    banner = page.locator("#summary-stale")
    assert re.search(r"Updated .+ — behind the conversation: 1 newer turn$", banner.inner_text())
    assert page.locator("details.intent").count() == 1  # a stale summary is still shown
    screenshot(page, "panel-stale-desktop")


def test_feature_off_explains_itself_and_hides_the_entry(page: Any, server: Server) -> None:
    slot = server.new_slot("off", "Feature off", turns=2)
    server.write_summary(slot, [intent("Hidden goal", "done", [[1, 2]])])
    server.set_enabled(False)
    try:
        open_session(page, slot)
        panel = page.locator("#summary-panel")
        assert panel.get_by_text("Session summaries are off").is_visible()
        assert panel.get_by_role("link", name="Settings").is_visible()
        assert page.locator("#summary-toggle").is_hidden()
        expect(page.locator("#summarize")).to_be_hidden()
        assert "Hidden goal" not in panel.inner_text()
    finally:
        server.set_enabled(True)


def test_too_few_turns(page: Any, server: Server) -> None:
    slot = server.new_slot("few", "Too few turns", turns=1)
    open_session(page, slot)
    panel = page.locator("#summary-panel")
    assert panel.get_by_text(
        "Send a couple of messages first — there is not enough here to summarize."
    ).is_visible()
    expect(page.locator("#summarize")).to_be_hidden()


def test_a_queued_or_running_pass_reads_as_generating(page: Any, server: Server) -> None:
    slot = server.new_slot("flight", "In flight", turns=2)
    server.set_in_flight(slot, True)
    try:
        open_session(page, slot)
        page.locator("#summary-content").get_by_text(
            "A summary is being written; it appears here when it is done."
        ).wait_for()
        button = page.locator("#summarize")  # shown, not offered: it keeps its focus
        expect(button).to_have_text("Summarizing…")
        expect(button).to_have_attribute("aria-disabled", "true")
    finally:
        server.set_in_flight(slot, False)
