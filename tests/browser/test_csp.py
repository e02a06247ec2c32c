"""The Content-Security-Policy holds in a real Chromium: every page the dashboard, the admin
and the API docs show runs under it without a single violation, live updates included.

Violations are caught twice: Chromium's console message ("Refused to ... because it
violates the following Content Security Policy directive") and the page's own
``securitypolicyviolation`` events, recorded by an init script (which CSP does not block).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import ADMIN_PASSWORD, ADMIN_USER, Server, login, open_session

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`);
});
"""


class Watch:
    """Console messages about CSP, for one page."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        page.on("console", self.on_console)

    def on_console(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.console.append(message.text)

    def goto(self, path: str) -> Any:
        response = self.page.goto(path)
        assert response is not None
        assert response.status == 200, (path, response.status)
        policy = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy, (path, policy)  # the policy is really there
        return response

    def assert_clean(self, where: str) -> None:
        events = self.page.evaluate("window.__csp || []")
        assert self.console == [], (where, self.console)
        assert events == [], (where, events)


@pytest.fixture
def watched(browser_context: Any) -> Iterator[Watch]:
    page = browser_context.new_page()
    page.add_init_script(RECORD_VIOLATIONS)
    watch = Watch(page)
    yield watch
    page.close()


def test_login_and_session_list_run_under_the_policy(watched: Watch):
    page = watched.page
    page.context.clear_cookies()
    watched.goto("/login/")
    watched.assert_clean("login")
    login(page)
    page.locator('#live[data-live="on"]').wait_for()  # the socket connected under connect-src
    page.locator(".session-card").first.wait_for()
    watched.assert_clean("session list")
    watched.goto("/settings/")
    watched.assert_clean("settings")
    watched.goto("/projects/")
    watched.assert_clean("projects")
    page.locator(".project-name a").first.click()
    page.wait_for_url("**/project/?path=*")
    watched.assert_clean("a project")


def test_a_live_session_page_runs_under_the_policy(watched: Watch, server: Server):
    page = watched.page
    login(page)
    slot = server.new_slot("csp-live", "CSP live session", turns=2)
    open_session(page, slot)
    server.turn(slot, "Please also run the linter.", "Ran it: clean.", stop="max_tokens")
    page.locator("#turn-3").wait_for()  # rows arrived live
    page.locator("#summarize").click()
    page.locator("#summary-panel details.intent").first.wait_for()
    page.locator("#transcript .row-tool, #transcript li").first.wait_for()
    details = page.locator("#summary-panel details.intent summary")
    if details.count() > 1:
        details.nth(1).click()
    watched.assert_clean("session page")


def test_the_admin_runs_under_the_policy(watched: Watch):
    page = watched.page
    page.context.clear_cookies()
    watched.goto("/admin/login/")
    page.locator("#id_username").fill(ADMIN_USER)
    page.locator("#id_password").fill(ADMIN_PASSWORD)
    page.locator("input[type=submit]").click()
    page.wait_for_url("**/admin/")
    watched.assert_clean("admin index")
    for path in ["/admin/auth/user/", "/admin/auth/user/1/change/", "/admin/auth/user/add/"]:
        watched.goto(path)
        page.wait_for_load_state("networkidle")
        watched.assert_clean(path)
    page.locator("#toggle-theme, .theme-toggle").first.click()  # the admin's own JS runs
    watched.assert_clean("admin theme toggle")


def test_the_api_docs_run_under_the_policy(watched: Watch):
    watched.goto("/api/docs")
    watched.page.locator(".swagger-ui .opblock").first.wait_for()
    watched.assert_clean("api docs")
