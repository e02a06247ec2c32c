"""The session page as a new user meets it (issue 13): Markdown rendered safely (a stored
XSS attempt in every place text reaches the page, at load and live), the header's turn
count live vs reloaded, the summary toggle's wording, the sticky panel, the favicon."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import Server, intent, open_session

ATTACKS = (
    '<img src=x onerror="window.__xss = 1">',
    "<script>window.__xss = 2</script>",
    "[click me](javascript:window.__xss=3)",
    '<a href="javascript:window.__xss=4">raw link</a>',
    '<svg onload="window.__xss = 5"></svg>',
    "![x](javascript:window.__xss=6)",
)
LONG_CODE = "```python\n" + "\n".join(f"line_{i} = {i}" for i in range(30)) + "\n```"


def assert_nothing_ran(page: Any, dialogs: list[str]) -> None:
    assert page.evaluate("window.__xss") is None
    assert dialogs == []
    transcript = page.locator("#transcript, #summary-panel")
    for selector in ("img", "script", "svg", "a[href^='javascript']", "[onerror]", "[onload]"):
        assert transcript.locator(selector).count() == 0, selector


def test_markdown_is_rendered_and_no_stored_html_runs(page: Any, server: Server) -> None:
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    slot = server.new_slot("f10-xss", "Markdown and XSS")
    server.turn(
        slot,
        "Please make it **bold** and keep `code` as code. " + " ".join(ATTACKS),
        "Done: see [the docs](https://example.com/docs).\n\n" + LONG_CODE,
        ("tool_result", "**not markdown** <b>tool output</b>"),
    )
    server.turn(slot, "Second ask: " + ATTACKS[0], "Second answer, with *emphasis*.")
    server.write_summary(
        slot,
        [
            intent(
                "**Ship** the `export` " + ATTACKS[0],
                "in-progress",
                [[1, 2]],
                progress=["Fixed *half* of it " + ATTACKS[1]],
                next_steps=[{"what": "Run `make lint` " + ATTACKS[2], "why": "", "expect": ""}],
            )
        ],
    )
    open_session(page, slot)

    first = page.locator("#turn-1")
    assert first.locator(".text strong").inner_text() == "bold"
    assert first.locator(".text code").first.inner_text() == "code"
    assert "<img" in first.inner_text()  # shown as text, never as markup
    answer = page.locator("#transcript .row-assistant").first
    assert answer.locator("a[href='https://example.com/docs']").get_attribute("rel") is not None
    long_code = answer.locator("details.code-long")
    assert long_code.get_attribute("open") is None  # a long block starts collapsed
    long_code.locator("summary").click()
    assert long_code.locator("pre code").evaluate("e => getComputedStyle(e).fontFamily") != ""
    mono = long_code.locator("pre").evaluate("e => getComputedStyle(e).fontFamily")
    assert "mono" in mono.lower()
    tool = page.locator("#transcript .row-tool").first
    assert tool.locator("strong").count() == 0  # tool output is code, not Markdown
    panel = page.locator("#summary-panel")
    panel.locator(".intent-title strong").get_by_text("Ship").wait_for()
    assert panel.locator(".intent-title code").inner_text() == "export"
    assert panel.locator(".steps code").first.inner_text() == "make lint"
    assert_nothing_ran(page, dialogs)

    # Live: a row appended while the page is open arrives through the same renderer.
    server.turn(slot, "Live **third** " + " ".join(ATTACKS), "Live answer " + ATTACKS[3])
    page.locator("#turn-3 .text strong").get_by_text("third").wait_for()
    page.wait_for_timeout(300)  # let any payload that could run, run
    assert_nothing_ran(page, dialogs)


def test_the_turn_count_reads_the_same_live_and_after_a_reload(page: Any, server: Server) -> None:
    slot = server.new_slot("f10-count", "Turn count", turns=1)
    open_session(page, slot)
    header = page.locator(".session-head p.muted")  # "count · 1 turn · last activity …"
    assert "· 1 turn ·" in header.inner_text()
    server.turn(slot, "A second request, live.", "Done.")
    page.locator("#turn-2").wait_for()
    live = header.inner_text().split("· last activity")[0]
    page.reload()
    page.locator("#turn-2").wait_for()
    assert live == header.inner_text().split("· last activity")[0]
    assert "· 2 turns" in live


def test_the_summary_toggle_says_what_it_does(page: Any, server: Server) -> None:
    slot = server.new_slot("f10-toggle", "Toggle", turns=1)
    open_session(page, slot)
    toggle = page.locator("#summary-toggle")
    assert toggle.inner_text() == "Hide summary"
    toggle.click()
    assert toggle.inner_text() == "Show summary"
    assert page.locator("#summary-panel").is_hidden()
    toggle.click()
    assert toggle.inner_text() == "Hide summary"
    assert page.locator("#summary-panel").is_visible()


def test_the_panel_stays_in_view_on_a_long_transcript(page: Any, server: Server) -> None:
    slot = server.new_slot("f10-long", "A long transcript", turns=12)
    page.set_viewport_size({"width": 1366, "height": 700})
    open_session(page, slot)
    page.locator("#turn-12").scroll_into_view_if_needed()
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    top = page.locator("#summary-panel").evaluate("e => e.getBoundingClientRect().top")
    assert 0 <= top < 700  # sticky: still on screen at the bottom of the page


def test_pages_have_a_favicon(page: Any, server: Server) -> None:
    page.goto("/")
    href = page.locator("link[rel='icon']").get_attribute("href")
    assert href is not None
    assert page.request.get(href).status == 200
    assert page.request.get("/favicon.ico").status == 200  # redirected to the same icon


def test_the_admin_sessions_list_fits_1366_px(page: Any, server: Server) -> None:
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto("/admin/transcripts/session/")
    results = page.locator("#changelist .results")
    results.wait_for()
    assert page.locator("#result_list th.column-anomalies").is_visible()
    overflow = results.evaluate("e => e.scrollWidth - e.clientWidth")
    assert overflow <= 0  # nothing clipped: the anomalies column is on screen
