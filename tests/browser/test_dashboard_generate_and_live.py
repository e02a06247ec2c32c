"""The dashboard in a real Chromium against a real daphne: generating a summary, live rows
and frames, reconnect after a restart, CSRF on the POST, and the settings toggle."""

from __future__ import annotations

import re
import time
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import (
    Server,
    intent,
    open_session,
    screenshot,
)
from tests.browser.dashboard_probes import mark_page, not_reloaded, summary_posts


def test_turn_running_disables_generate_and_rows_arrive_live(page: Any, server: Server) -> None:
    slot = server.new_slot("running", "Running turn", turns=2)
    open_session(page, slot)
    mark_page(page)
    button = page.locator("#summarize")
    expect(button).to_have_attribute("aria-disabled", "false")
    server.api("POST", f"/slots/{slot}/turns", {"content": "Third request, live."}, expect=201)
    page.locator("#turn-state").wait_for(state="visible")
    expect(button).to_have_attribute("aria-disabled", "true")
    why = page.locator("#summarize-why")
    assert why.inner_text() == (
        "Cannot summarize while a turn is running. Wait for this turn to finish."
    )
    assert button.get_attribute("aria-describedby") == "summarize-why"
    posts = summary_posts(page)
    button.focus()  # still focusable (it describes why), but it does nothing while the turn runs
    page.keyboard.press("Enter")
    page.wait_for_timeout(200)
    assert posts == []
    page.locator("#turn-3").get_by_text("Third request, live.").wait_for()
    ts = server.api(
        "POST", f"/slots/{slot}/rows", {"role": "tool_call", "content": "pytest -q"}, expect=201
    )["ts"]
    page.locator("#transcript .row-tool .preview").last.get_by_text("pytest -q").wait_for()
    assert page.locator("#transcript .row-tool details").last.get_attribute("open") is None
    server.api(
        "POST",
        f"/slots/{slot}/rows/{ts}/revisions",
        {"patch": {"content": "pytest -q tests/unit"}},
        expect=201,
    )
    page.locator("#transcript .row-tool .preview").last.get_by_text(
        "pytest -q tests/unit"
    ).wait_for()
    server.api("POST", f"/slots/{slot}/turns/end", {"stop_reason": "cancelled"}, expect=200)
    expect(button).to_have_attribute("aria-disabled", "false")
    assert button.get_attribute("aria-describedby") is None
    assert page.locator("#turn-state").is_hidden()
    assert page.locator("#turn-count").inner_text() == "3 turns"  # as after a reload
    assert not_reloaded(page)


def test_generate_makes_exactly_one_post_and_updates_the_panel(page: Any, server: Server) -> None:
    slot = server.new_slot("generate", "Generate on request", turns=3)
    open_session(page, slot)
    panel = page.locator("#summary-panel")
    assert panel.get_by_text("No summary yet", exact=False).is_visible()
    posts = summary_posts(page)
    page.evaluate(
        """() => { window.__labels = [];
          new MutationObserver(() => { const b = document.getElementById('summarize');
            window.__labels.push(b.textContent + ':' + b.getAttribute('aria-disabled')); })
          .observe(document.getElementById('summarize'),
                   {childList: true, characterData: true, subtree: true, attributes: true}); }"""
    )
    page.locator("#summarize").click()  # queued (202): the frame brings the summary
    panel.locator("details.intent").first.wait_for()
    page.wait_for_timeout(300)
    assert len(posts) == 1, posts
    assert "Summarizing…:true" in page.evaluate("window.__labels")
    expect(page.locator("#summarize")).to_be_focused()  # focus stays on the button
    assert "Offline estimate" in panel.locator(".byline").inner_text()


def test_summary_from_another_process_arrives_via_the_frame(page: Any, server: Server) -> None:
    slot = server.new_slot("pushed", "Pushed summary", turns=3)
    open_session(page, slot)
    mark_page(page)
    panel = page.locator("#summary-panel")
    assert panel.locator("details.intent").count() == 0
    posts = summary_posts(page)
    server.api("POST", f"/slots/{slot}/summary", expect=202)  # the app, not this page
    panel.locator("details.intent").first.wait_for()
    assert not_reloaded(page)
    assert posts == []


def test_reconnect_after_restart_refetches(page: Any, server: Server) -> None:
    slot = server.new_slot("restart", "Restart resync", turns=2)
    server.write_summary(slot, [intent("Before the restart", "in-progress", [[1, 2]])])
    open_session(page, slot)
    mark_page(page)
    page.locator(".intent-title", has_text="Before the restart").wait_for()
    server.stop()
    page.locator('#live[data-live="off"]').wait_for()
    server.write_summary(slot, [intent("Written while the server was down", "done", [[1, 2]])])
    time.sleep(0.5)
    server.start()
    page.locator(".intent-title", has_text="Written while the server was down").wait_for(
        timeout=30_000
    )
    page.locator('#live[data-live="on"]').wait_for()
    assert not_reloaded(page)


def test_refetch_failure_keeps_the_summary(page: Any, server: Server) -> None:
    slot = server.new_slot("keep", "Keep on failure", turns=2)
    server.api("POST", f"/slots/{slot}/summary", expect=202)
    open_session(page, slot)
    titles = page.locator(".intent-title")
    titles.first.wait_for()
    shown = titles.all_inner_texts()
    reads = re.compile(r"/summary/?$")  # the panel reads the dashboard's /s/<slot>/summary/
    page.route(reads, lambda route: route.fulfill(status=500, body="boom"))
    # A clean turn end writes a new summary and pushes its frame; the refetch then fails.
    server.turn(slot, "Also document the new flag.", "Documented it in the README.")
    page.locator("#summary-status").get_by_text("Could not refresh the summary").wait_for()
    assert titles.all_inner_texts() == shown  # the last summary received stays on screen
    page.unroute(reads)
    page.get_by_role("button", name="Check again").click()
    page.locator("#summary-status").get_by_text("Could not refresh").wait_for(state="detached")


def test_csrf_is_enforced_on_the_post(page: Any, server: Server) -> None:
    slot = server.new_slot("csrf", "CSRF", turns=1)
    open_session(page, slot)
    status = page.evaluate(
        """async (slot) => (await fetch(`/api/chat/slots/${slot}/summary`,
            {method: 'POST', credentials: 'same-origin'})).status""",
        slot,
    )
    assert status == 403
    with_token = page.evaluate(
        """async (slot) => (await fetch(`/api/chat/slots/${slot}/summary`, {method: 'POST',
            credentials: 'same-origin', headers: {'X-CSRFToken':
            document.querySelector('meta[name=csrf-token]').content}})).status""",
        slot,
    )
    assert with_token == 409  # accepted past CSRF; one turn is too few to summarize


def test_settings_toggle_in_the_browser(page: Any, server: Server) -> None:
    slot = server.new_slot("toggle", "Toggle from settings", turns=2)
    page.goto("/settings/")
    screenshot(page, "settings-desktop")
    page.get_by_role("button", name="Turn session summaries off").click()
    page.get_by_text("Session summaries turned off").wait_for()
    try:
        open_session(page, slot)
        assert page.locator("#summary-panel").get_by_text("Session summaries are off").is_visible()
        assert page.locator("#summary-toggle").is_hidden()
    finally:
        page.goto("/settings/")
        page.get_by_role("button", name="Turn session summaries on").click()
        page.get_by_text("Session summaries turned on").wait_for()
    open_session(page, slot)
    assert page.locator("#summary-toggle").is_visible()
    expect(page.locator("#summarize")).to_have_attribute("aria-disabled", "false")
