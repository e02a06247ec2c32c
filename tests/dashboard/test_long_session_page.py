"""A long session opens at its last turns; earlier turns come from the rows view by gap,
and live rows by the page's opaque position. The page's JS only echoes what the server
gave it and puts the markup where the server says: these tests play the JS's part.

Real requests through the test client against a real store on disk.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from kirocrew_site.dashboard.positions import Gap
from transcripts.core.paging import PAGE_INDEX
from transcripts.services import session_append_revision, session_append_row

TURNS = 12


@pytest.fixture(autouse=True)
def _few_turns(settings: Any) -> Any:
    settings.KIROCREW_SESSION_PAGE_TURNS = 3
    PAGE_INDEX.clear()
    yield
    PAGE_INDEX.clear()


def long_rows(turns: int = TURNS) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [("system", "You are helpful.")]
    for n in range(1, turns + 1):
        rows += [("user", f"question {n}"), ("assistant", f"answer {n}")]
        if n == 5:
            rows.append(("user", "[cron notification] not a turn"))
    return rows


def turn_ids(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'id="turn-(\d+)"', html)]


def cursors(html: str) -> list[str]:
    return re.findall(r'data-cursor="([^"]*)"', html)


def gaps(html: str) -> list[str]:
    return re.findall(r'<li class="gap" data-gap="([^"]*)">', html)


def gap_texts(html: str) -> list[str]:
    return re.findall(r'<span class="gap-text">… (.*?) not loaded …</span>', html)


def page_state(body: str) -> dict[str, Any]:
    found = re.search(r'<script id="page-state" type="application/json">(.*?)</script>', body, re.S)
    assert found
    return dict(json.loads(found.group(1)))


def replace_gap(page: str, token: str, html: str) -> str:
    """What the page's JS does with a gap answer: the gap's marker becomes ``html``."""
    marker = re.search(rf'<li class="gap" data-gap="{re.escape(token)}">.*?</li>', page, re.S)
    assert marker, token
    return page[: marker.start()] + html + page[marker.end() :]


def load_gap(client: Client, page: str, query: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    body = client.get(f"/s/long/rows/?{urlencode(query, doseq=True)}").json()
    return (replace_gap(page, body["gap"], body["html"]) if body["gap"] else page), body


def test_a_long_session_opens_at_its_last_turns(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    body = client_in.get("/s/long/").content.decode()
    assert turn_ids(body) == [10, 11, 12]
    assert "question 9" not in body
    assert "answer 12" in body
    assert gap_texts(body) == ["9 turns"]
    assert len(gaps(body)) == 1
    assert "Load earlier turns" in body
    assert "12 turns" in body  # the header counts the whole session
    state = page_state(body)
    # The page's JS gets an opaque position, never turn numbers to compute with.
    assert isinstance(state["cursor"], str)
    assert state["cursor"]
    assert not {"userTurns", "pageTurns", "turns"} & set(state)


def test_a_short_session_shows_everything(client_in: Client, make_session: Any) -> None:
    make_session("short", long_rows(3))
    body = client_in.get("/s/short/").content.decode()
    assert turn_ids(body) == [1, 2, 3]
    assert "You are helpful." in body  # rows before turn 1 come with turn 1
    assert 'class="gap"' not in body


def test_gap_loads_join_into_the_whole_page(
    client_in: Client, make_session: Any, settings: Any
) -> None:
    """Buttons and links, in any order, end at exactly the page that shows every turn."""
    make_session("long", long_rows())
    settings.KIROCREW_SESSION_PAGE_TURNS = 1000
    whole = client_in.get("/s/long/").content.decode()
    settings.KIROCREW_SESSION_PAGE_TURNS = 3
    page = client_in.get("/s/long/").content.decode()
    # A link to turn 5: turns 5-7 come, turns 1-4 and 8-9 stay gaps.
    page, body = load_gap(client_in, page, {"gap": gaps(page), "target": "turn-5"})
    assert turn_ids(body["html"]) == [5, 6, 7]
    assert "[cron notification] not a turn" in body["html"]  # turn 5 runs to turn 6's row
    assert gap_texts(page) == ["4 turns", "2 turns"]
    assert "Load these turns" in body["html"]  # the later gap does not start at turn 1
    assert turn_ids(page) == [5, 6, 7, 10, 11, 12]
    page, body = load_gap(client_in, page, {"gap": gaps(page)[1]})  # its button
    assert turn_ids(body["html"]) == [8, 9]
    page, body = load_gap(client_in, page, {"gap": gaps(page)[0]})  # the last 3 of 1-4
    assert turn_ids(body["html"]) == [2, 3, 4]
    assert gap_texts(page) == ["1 turn"]
    page, body = load_gap(client_in, page, {"gap": gaps(page)})
    assert turn_ids(page) == list(range(1, TURNS + 1))
    assert gaps(page) == []
    assert [c for c in cursors(page) if c] == [c for c in cursors(whole) if c]
    assert body["turns_text"] == "12 turns"


def test_a_link_into_turn_three_of_many(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    page = client_in.get("/s/long/").content.decode()
    (token,) = gaps(page)
    body = client_in.get("/s/long/rows/", {"gap": token, "target": "turn-3"}).json()
    assert body["gap"] == token  # the marker the answer replaces
    assert turn_ids(body["html"]) == [3, 4, 5]
    assert "question 3" in body["html"]
    assert "answer 5" in body["html"]
    assert "question 6" not in body["html"]
    assert gap_texts(body["html"]) == ["2 turns", "4 turns"]
    assert body["turns_text"] == "12 turns"


def test_a_target_no_gap_holds_loads_nothing(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    (token,) = gaps(client_in.get("/s/long/").content.decode())
    for target in ["turn-11", "turn-40", "summary-panel", "turn-0", "turn-x"]:
        body = client_in.get("/s/long/rows/", {"gap": token, "target": target}).json()
        assert body == {"gap": "", "html": ""}, target


def test_a_gap_past_the_end_goes(client_in: Client, make_session: Any) -> None:
    """A gap whose turns are gone (the session was rewound since) is replaced by nothing."""
    make_session("long", long_rows())
    token = Gap(40, 45).token()
    body = client_in.get("/s/long/rows/", {"gap": token}).json()
    assert (body["gap"], body["html"]) == (token, "")


def forged(values: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode()


@pytest.mark.parametrize(
    "query",
    [
        {"gap": "x"},
        {"gap": forged([0, 3])},
        {"gap": forged([5, 3])},
        {"gap": forged([True, 3])},
        {"gap": forged([1, 3, 4])},
        {"gap": forged(["1", "3"])},
        {"gap": [Gap(1, 2).token(), Gap(4, 5).token()]},  # a button sends one gap
        {"gap": ""},
        {"at": "not a position"},
        {"at": forged(["", -1, "", 0, ""])},
        {"at": forged(["x", 1, "", 0])},
    ],
)
def test_bad_tokens_are_a_json_422(
    client_in: Client, make_session: Any, query: dict[str, Any]
) -> None:
    make_session("long", long_rows())
    response = client_in.get(f"/s/long/rows/?{urlencode(query, doseq=True)}")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"


def test_an_unknown_session_gap_is_404(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    assert client_in.get("/s/nope/rows/", {"gap": Gap(1, 2).token()}).status_code == 404


def live(client: Client, cursor: str, *why: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(
        f"/s/long/rows/?{urlencode({'at': cursor, 'why': why}, doseq=True)}"
    ).json()
    return body


def test_live_rows_continue_after_a_window(client_in: Client, make_session: Any) -> None:
    """The page's position carries the session's numbering, so live rows number on."""
    slot = make_session("long", long_rows())
    state = page_state(client_in.get("/s/long/").content.decode())
    session_append_row(key=slot.session.key, role="user", content="question 13")
    body = live(client_in, state["cursor"], "user")
    assert turn_ids(body["html"]) == [13]
    assert body["replace"] == ""  # appended
    assert body["turns_text"] == "13 turns"
    session_append_row(key=slot.session.key, role="assistant", content="answer 13")
    more = live(client_in, body["cursor"], "assistant")
    assert "answer 13" in more["html"]
    assert "question 13" not in more["html"]


@pytest.mark.parametrize("why", ["revision", "resync"])
def test_a_revision_re_renders_the_running_turn(
    client_in: Client, make_session: Any, why: str
) -> None:
    slot = make_session("long", long_rows())
    key = slot.session.key
    page = client_in.get("/s/long/").content.decode()
    state = page_state(page)
    draft = session_append_row(key=key, role="assistant", content="draft of answer 12").ts[0]
    body = live(client_in, state["cursor"], "assistant")
    session_append_revision(key=key, target_ts=draft, patch={"content": "final answer 12"})
    reread = live(client_in, body["cursor"], "assistant", why)
    # From turn 12's user row on, replacing that row and every row after it on the page.
    (turn_row,) = re.findall(r'data-cursor="([^"]*)" id="turn-12"', page)
    assert reread["replace"] == turn_row
    assert turn_ids(reread["html"]) == [12]
    assert "final answer 12" in reread["html"]
    assert "draft of answer 12" not in reread["html"]
    assert reread["html"].startswith(f'<li class="row row-user" data-cursor="{reread["replace"]}"')
    reloaded = client_in.get("/s/long/").content.decode()
    assert all(row in reloaded for row in re.findall(r"<li.*?</li>", reread["html"], re.S))
    # The next row after the re-read appends again.
    session_append_row(key=key, role="user", content="question 13")
    after = live(client_in, reread["cursor"], "user")
    assert (after["replace"], turn_ids(after["html"])) == ("", [13])


def test_a_revision_before_any_turn_re_renders_every_row(
    client_in: Client, make_session: Any
) -> None:
    """With no user turn yet, the running turn is the whole session."""
    slot = make_session("long", [("system", "boot"), ("assistant", "draft")])
    state = page_state(client_in.get("/s/long/").content.decode())
    rows = client_in.get("/s/long/").content.decode()
    draft = cursors(rows)[-1]
    session_append_revision(key=slot.session.key, target_ts=draft, patch={"content": "final"})
    body = live(client_in, state["cursor"], "revision")
    assert body["replace"] == cursors(rows)[0]
    assert "boot" in body["html"]
    assert "final" in body["html"]
    assert "draft" not in body["html"]
