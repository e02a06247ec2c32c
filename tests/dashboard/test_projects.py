"""Where was I, across sessions: the projects index and a project's open intents.

Summaries are stored by the real pass (``summary_generate``) with a backend that replies
what the test says, so the mirror and the sidecar are exactly what a pass leaves.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client

from kirocrew_site.dashboard.projects import (
    NO_PROJECT,
    SessionIntents,
    open_items,
    project_get,
    project_list,
)
from kirocrew_site.dashboard.selectors import dashboard_sessions
from summaries.core.gate import PassResult
from summaries.services import summary_generate
from tests.fixtures.summaries import use_backend
from transcripts.models import App, Slot
from transcripts.services import app_create, session_update_metadata

pytestmark = pytest.mark.django_db

SHOP = "/home/dev/shop"
BLOG = "/home/dev/blog"


class Scripted:
    """A summary backend that replies the intents it was given (one pass each)."""

    name = "scripted"

    def __init__(self) -> None:
        self.reply: list[dict[str, Any]] = []

    def generate(self, prompt: str, turns: Sequence[Any]) -> str:
        return json.dumps({"intents": self.reply, "constraints": []})


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, enabled_summaries: Any) -> Scripted:
    backend = Scripted()
    use_backend(monkeypatch, backend)
    return backend


def intent(title: str, status: str, ranges: list[list[int]], **more: Any) -> dict[str, Any]:
    return {"title": title, "status": status, "ranges": ranges, **more}


def question(turn: int, text: str) -> dict[str, Any]:
    """A pending decision the summary cites (the checks keep only evidence a reply cites
    from a row that holds its quote): the person's turn ``turn`` asks ``text``."""
    return {"turn": turn, "ts": None, "kind": "pending_decision", "quote": text}


def asked(intent: dict[str, Any]) -> dict[int, str]:
    """The turn texts an intent's question needs the session to hold."""
    evidence = intent.get("evidence") or {}
    return {evidence["turn"]: evidence["quote"]} if evidence else {}


@pytest.fixture
def project_session(make_session: Callable[..., Slot], scripted: Scripted) -> Callable[..., Slot]:
    """A session in ``project`` ("" = none) with ``turns`` turns, summarized as ``intents``."""

    def make(
        name: str,
        project: str,
        intents: list[dict[str, Any]],
        *,
        turns: int = 4,
        app: App | None = None,
    ) -> Slot:
        said = {n: text for i in intents for n, text in asked(i).items()}
        rows: list[tuple[str, Any]] = []
        for n in range(1, turns + 1):
            rows += [
                ("user", said.get(n, f"Step {n} of {name}, please.")),
                ("assistant", f"Did step {n}."),
            ]
        for i in intents:
            if i.get("evidence"):
                i.setdefault("cites", [f"U{i['evidence']['turn']}"])
        slot = make_session(name, rows, title=f"Session {name}", app=app)
        if project:
            session_update_metadata(key=slot.session.key, updates={"cwd": project})
        scripted.reply = intents
        assert summary_generate(slot_name=name, force=True).reason is PassResult.STORED
        slot.session.refresh_from_db()
        return slot

    return make


def project_url(path: str, **query: str) -> str:
    extra = "".join(f"&{k}={quote(v, safe='')}" for k, v in query.items())
    return f"/project/?path={quote(path, safe='')}{extra}"


def items_of(body: str) -> list[str]:
    """The open items' titles, in page order."""
    block = body.split('id="open-items"', 1)[1].split("</ol>", 1)[0]
    return [
        re.sub(r"\s+", " ", title).strip()
        for title in re.findall(r'<a href="/s/[^"]*">([^<]*)</a>', block)
    ]


# ---------------------------------------------------------------- one project's open intents


def test_a_project_lists_every_open_intent_of_its_sessions_linked_to_its_turn(
    project_session: Callable[..., Slot], client_in: Client
) -> None:
    project_session(
        "older",
        SHOP,
        [
            intent("Add the payment webhook", "active", [[7, 8]]),
            intent("Upgrade Django", "completed", [[3, 4]], verified=True),
        ],
        turns=8,
    )
    newer = project_session(
        "newer",
        SHOP,
        [
            intent("Ship the refund flow", "completed", [[3, 5]], verified=False),
            intent("Rename the cart module", "abandoned", [[1, 1]]),
            intent(
                "Pick a queue for emails",
                "active",
                [[2, 2], [6, 6]],
                evidence=question(6, "Redis or SQS for the email queue?"),
            ),
        ],
        turns=6,
    )
    project_session("elsewhere", BLOG, [intent("Write the launch post", "active", [[1, 4]])])

    body = client_in.get(project_url(SHOP)).content.decode()

    # Open work only (done and dropped are closed), most recently touched first: the newer
    # session's items by turn, then the older session's.
    assert items_of(body) == [
        "Pick a queue for emails",
        "Ship the refund flow",
        "Add the payment webhook",
    ]
    assert "Write the launch post" not in body  # another project
    # Each links to the session page's turn anchor (row.html: id="turn-N").
    assert f'href="/s/{newer.name}/#turn-6">Pick a queue for emails' in body
    assert f'href="/s/{newer.name}/#turn-5">Ship the refund flow' in body
    assert 'href="/s/older/#turn-8">Add the payment webhook' in body
    # The open question is named, with what was asked.
    assert "Open question" in body
    assert "Redis or SQS for the email queue?" in body


def test_open_items_put_the_most_recent_session_first_then_its_latest_turn() -> None:
    """Sessions may come in any order; a later turn of an older session stays below."""
    day = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)

    def session(name: str, hours: int, *intents: tuple[str, str, int]) -> SessionIntents:
        return SessionIntents(
            slot=name,
            title=name,
            last_activity=day + dt.timedelta(hours=hours),
            turns=30,
            behind=False,
            intents=[{"title": t, "state": s, "last_touched_turn": turn} for t, s, turn in intents],
        )

    items = open_items(
        [
            session("older", 1, ("Old late turn", "in-progress", 30), ("Old done", "done", 29)),
            session("newer", 5, ("New early", "needs-you", 2), ("New later", "in-progress", 9)),
        ]
    )
    assert [i.title for i in items] == ["New later", "New early", "Old late turn"]
    assert [i.anchor for i in items] == ["turn-9", "turn-2", "turn-30"]


def test_needs_you_on_a_project_page_is_what_the_list_filter_finds(
    project_session: Callable[..., Slot], client_in: Client
) -> None:
    """One rule: the items marked "Needs you" belong exactly to the sessions the sessions
    list's "Needs you" filter lists."""
    project_session(
        "waits", SHOP, [intent("Ship the refund flow", "completed", [[1, 4]], verified=False)]
    )
    project_session("busy", SHOP, [intent("Add the webhook", "active", [[1, 4]])])
    project_session(
        "asks",
        SHOP,
        [intent("Pick a queue", "active", [[1, 4]], evidence=question(4, "Redis or SQS?"))],
    )

    view = project_get(path=SHOP)
    assert view is not None
    marked = {item.slot for item in view.items if item.state == "needs-you"}
    filtered = {s.slot.name for s in dashboard_sessions(state="needs-you")}
    assert marked == filtered
    assert "waits" in marked
    assert "busy" not in marked
    assert view.counts.needs_you == len([i for i in view.items if i.state == "needs-you"])
    assert view.counts.questions == 1


def test_sessions_without_a_project_are_grouped_under_no_project(
    project_session: Callable[..., Slot], client_in: Client
) -> None:
    project_session("api-made", "", [intent("Tidy the README", "active", [[1, 2]])])
    project_session("in-shop", SHOP, [intent("Add the webhook", "active", [[1, 2]])])

    index = client_in.get("/projects/").content.decode()
    assert "No project" in index
    assert 'href="/project/?path="' in index

    body = client_in.get(project_url(NO_PROJECT)).content.decode()
    assert items_of(body) == ["Tidy the README"]


def test_the_projects_index_counts_sessions_and_open_intents_per_project(
    project_session: Callable[..., Slot], client_in: Client
) -> None:
    project_session(
        "a",
        SHOP,
        [
            intent("Ship refunds", "completed", [[1, 2]], verified=False),
            intent("Add the webhook", "active", [[3, 4]]),
            intent("Upgrade Django", "completed", [[1, 1]], verified=True),
        ],
    )
    project_session("b", SHOP, [intent("Fix the cart", "active", [[1, 4]])])
    project_session("c", BLOG, [intent("Launch post", "completed", [[1, 4]], verified=True)])

    projects = {row.path: row for row in project_list()}
    assert (projects[SHOP].sessions, projects[SHOP].open, projects[SHOP].needs_you) == (2, 3, 1)
    assert (projects[BLOG].sessions, projects[BLOG].open, projects[BLOG].needs_you) == (1, 0, 0)
    # The index's counts and the project page's items agree.
    shop = project_get(path=SHOP)
    assert shop is not None
    assert len(shop.items) == projects[SHOP].open

    index = client_in.get("/projects/").content.decode()
    assert f'href="/project/?path={quote(SHOP, safe="")}"' in index
    assert "2 sessions" in index
    assert "1 Needs you" in index
    assert "3 open" in index


def test_the_projects_index_is_reachable_from_the_sessions_list(client_in: Client) -> None:
    body = client_in.get("/").content.decode()
    assert 'href="/projects/"' in body
    assert client_in.get("/projects/").status_code == 200


# ---------------------------------------------------------------- ownership and bad input


def test_another_apps_sessions_are_never_listed_under_its_filter(
    project_session: Callable[..., Slot], client_in: Client
) -> None:
    """A project page shows what the sessions list shows: with the list's app filter, the
    other app's sessions of the same project are neither listed nor counted."""
    mine, _ = app_create(name="mine")
    theirs, _ = app_create(name="theirs")
    project_session("m1", SHOP, [intent("Add the webhook", "active", [[1, 2]])], app=mine)
    project_session("t1", SHOP, [intent("Their secret plan", "active", [[1, 2]])], app=theirs)
    project_session("t2", BLOG, [intent("Their blog", "active", [[1, 2]])], app=theirs)

    assert {r.path for r in project_list(app="mine")} == {SHOP}
    view = project_get(path=SHOP, app="mine")
    assert view is not None
    assert [i.title for i in view.items] == ["Add the webhook"]
    assert project_get(path=BLOG, app="mine") is None

    body = client_in.get(project_url(SHOP, app="mine")).content.decode()
    assert "Add the webhook" in body
    assert "Their secret plan" not in body
    assert "Session t1" not in body
    assert client_in.get(project_url(BLOG, app="mine")).status_code == 404
    index = client_in.get("/projects/?app=mine").content.decode()
    assert "blog" not in index
    # Without the filter a dashboard user sees every app's, as the sessions list does.
    assert "Their secret plan" in client_in.get(project_url(SHOP)).content.decode()


@pytest.mark.parametrize("path", ["/projects/", project_url(SHOP)])
def test_project_pages_need_a_login(path: str, db: Any) -> None:
    response = Client().get(path)
    assert response.status_code == 302
    assert "/login/" in response["Location"]


@pytest.mark.parametrize(
    "url",
    [
        "/project/",  # which project?
        project_url("/nowhere"),  # no session ran there
        project_url("x" * 5000),  # longer than any stored project
        "/project/?path=%00",  # NUL: no stored project holds one
    ],
)
def test_an_unknown_project_is_a_404_page_not_a_500(
    url: str, project_session: Callable[..., Slot], client_in: Client
) -> None:
    project_session("s", SHOP, [intent("Add the webhook", "active", [[1, 2]])])
    assert client_in.get(url).status_code == 404


def test_with_summaries_off_a_project_lists_its_sessions_but_no_intents(
    project_session: Callable[..., Slot], client_in: Client, configure: Callable[..., Any]
) -> None:
    project_session("s", SHOP, [intent("Add the webhook", "active", [[1, 2]])])
    configure(enabled=False)

    body = client_in.get(project_url(SHOP)).content.decode()
    assert 'id="summaries-off"' in body
    assert "Add the webhook" not in body
    assert "Session s" in body
    shop = {r.path: r for r in project_list()}[SHOP]
    assert (shop.sessions, shop.open, shop.needs_you) == (1, 0, 0)
