"""Staff pick the summary backend in a real browser: the settings page lists a local
OpenAI-compatible server (a real one on loopback, found by its model list), Test shows
the model and its latency, Use stores it, and the next pass's summary says who wrote it.
A heuristic summary reads "Offline estimate", with a link to pick a model for staff only.

Its own daphne (its own KIROCREW_HOME and KIROCREW_LOCAL_MODEL_URLS): the pick changes
which backend writes every later summary, which the shared server's tests must not see.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import ADMIN_PASSWORD, ADMIN_USER, ROOT, Server, intent, screenshot
from tests.summaries.django.conftest import VALID_REPLY
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

READER, READER_PASSWORD = "reader", "browser-reader-pw-1"


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        fake.models = ("fake-llama",)
        fake.default = Behaviour.reply(VALID_REPLY)
        yield fake


@pytest.fixture(scope="module")
def picker_server(
    tmp_path_factory: pytest.TempPathFactory, model_server: FakeOpenAIServer
) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("picker-home"))
    srv.env["KIROCREW_LOCAL_MODEL_URLS"] = model_server.base_url
    srv.set_enabled(True)
    srv.manage("migrate", "--noinput", "-v", "0")
    srv.manage("createsuperuser", "--noinput")
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; "
            f"get_user_model().objects.create_user({READER!r}, password={READER_PASSWORD!r})",
        ],
        cwd=ROOT,
        env=srv.env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    srv.token = srv.manage("create_app", "picker").strip().splitlines()[-1]
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def tab(browser_context: Any) -> Iterator[Any]:
    # Cookies are per host, not per port: the shared server's login must not be reused
    # here, nor this one's left behind for the next test.
    browser_context.clear_cookies()
    page = browser_context.new_page()
    yield page
    page.close()
    browser_context.clear_cookies()


def log_in(page: Any, srv: Server, user: str, password: str) -> None:
    page.goto(f"{srv.url}/login/")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{srv.url}/")


def byline(page: Any, srv: Server, slot: str) -> Any:
    page.goto(f"{srv.url}/s/{slot}/")
    return page.locator("#summary-panel .byline")


def test_staff_test_and_use_a_local_server_then_its_summaries_say_so(
    tab: Any, picker_server: Server, model_server: FakeOpenAIServer
) -> None:
    srv = picker_server
    offline = srv.new_slot("offline", "Before a model was picked", turns=2)
    srv.api("POST", f"/slots/{offline}/summary", expect=202)  # a heuristic pass
    log_in(tab, srv, ADMIN_USER, ADMIN_PASSWORD)

    line = byline(tab, srv, offline)
    line.get_by_text("Offline estimate").wait_for()
    assert line.get_by_role("link", name="pick a model").get_attribute("href") == (
        "/settings/#backends"
    )

    tab.goto(f"{srv.url}/settings/")
    row = tab.locator('li.backend-option[data-spec="openai:fake-llama"]')
    assert f"local server at {model_server.base_url}" in row.inner_text()
    assert [r.path for r in model_server.requests] == ["/v1/models"]  # listing spends nothing

    row.get_by_role("button", name="Test").click()
    result = row.locator(".backend-result")
    result.get_by_text(re.compile(r"^openai:fake-llama answered in \d+ ms")).wait_for()

    row.get_by_role("button", name="Use this backend").click()
    result.get_by_text("Summaries are now written by openai:fake-llama.").wait_for()
    assert tab.locator("#backend-in-use").inner_text() == "openai:fake-llama"
    assert "picked here" in tab.locator("#backend-in-use-note").inner_text()
    screenshot(tab, "settings-backend-picked")

    picked = srv.new_slot("picked", "After the pick", turns=2)
    srv.api("POST", f"/slots/{picked}/summary", expect=202)  # a pass, by the picked backend
    byline(tab, srv, picked).get_by_text("Written by openai:fake-llama").wait_for()
    chats = [r for r in model_server.requests if r.path == "/v1/chat/completions"]
    assert len(chats) == 2  # the one Test request and the pass


def test_a_reader_sees_the_estimate_without_the_link(tab: Any, picker_server: Server) -> None:
    srv = picker_server
    slot = "reader-offline"
    srv.new_slot(slot, "Read by a non-staff user", turns=2)
    srv.write_summary(slot, [intent("Fix the login", "in-progress", [[1, 2]])], model="heuristic")
    log_in(tab, srv, READER, READER_PASSWORD)
    line = byline(tab, srv, slot)
    line.get_by_text("Offline estimate").wait_for()
    assert line.get_by_role("link").count() == 0
    for what in ("test", "use"):
        answer = tab.request.post(
            f"{srv.url}/settings/backend/{what}/",
            form={"spec": "heuristic"},
            headers={
                "X-CSRFToken": tab.evaluate(
                    "document.querySelector('meta[name=csrf-token]').content"
                )
            },
        )
        assert answer.status == 403
