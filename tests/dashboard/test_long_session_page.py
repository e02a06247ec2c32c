"""A long session opens at its last turns; earlier turns come from the rows view by range.

Real requests through the test client against a real store on disk.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from transcripts.core.paging import PAGE_INDEX
from transcripts.services import session_append_row

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


def page_state(body: str) -> dict[str, Any]:
    found = re.search(r'<script id="page-state" type="application/json">(.*?)</script>', body, re.S)
    assert found
    return dict(json.loads(found.group(1)))


def test_a_long_session_opens_at_its_last_turns(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    body = client_in.get("/s/long/").content.decode()
    assert turn_ids(body) == [10, 11, 12]
    assert "question 9" not in body
    assert "answer 12" in body
    assert "… 9 turns not loaded …" in body
    assert 'data-from="1" data-to="9"' in body
    assert "12 turns" in body  # the header counts the whole session
    state = page_state(body)
    assert state["userTurns"] == TURNS
    assert state["pageTurns"] == 3


def test_a_short_session_shows_everything(client_in: Client, make_session: Any) -> None:
    make_session("short", long_rows(3))
    body = client_in.get("/s/short/").content.decode()
    assert turn_ids(body) == [1, 2, 3]
    assert "You are helpful." in body  # rows before turn 1 come with turn 1
    assert 'class="gap"' not in body


def test_turn_ranges_join_into_the_whole_page(
    client_in: Client, make_session: Any, settings: Any
) -> None:
    make_session("long", long_rows())
    settings.KIROCREW_SESSION_PAGE_TURNS = 1000
    whole = client_in.get("/s/long/").content.decode()
    settings.KIROCREW_SESSION_PAGE_TURNS = 3
    pieces: list[str] = []
    for first, last in [(1, 4), (5, 5), (6, 9), (10, 12)]:
        body = client_in.get(f"/s/long/rows/?turn_from={first}&turn_to={last}").json()
        assert (body["first"], body["last"], body["turns"]) == (first, last, TURNS)
        assert turn_ids(body["html"]) == list(range(first, last + 1))
        if pieces:
            assert body["before"] == cursors(pieces[-1])[-1]  # the row before the range
        pieces.append(body["html"])
    joined = "".join(pieces)
    assert cursors(joined) == [c for c in cursors(whole) if c]
    assert "[cron notification] not a turn" in pieces[1]  # turn 5 runs to turn 6's row


def test_a_link_into_turn_three_of_many(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    body = client_in.get("/s/long/rows/?turn_from=3&turn_to=3").json()
    assert turn_ids(body["html"]) == [3]
    assert "question 3" in body["html"]
    assert "answer 3" in body["html"]
    assert "question 4" not in body["html"]
    assert body["turns_text"] == "12 turns"


def test_a_range_past_the_end_is_empty(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    body = client_in.get("/s/long/rows/?turn_from=40&turn_to=45").json()
    assert body["html"] == ""
    assert body["last"] == 0
    body = client_in.get("/s/long/rows/?turn_from=11&turn_to=45").json()
    assert (body["first"], body["last"]) == (11, 12)


@pytest.mark.parametrize(
    "query",
    [
        "turn_from=x&turn_to=3",
        "turn_from=0&turn_to=3",
        "turn_from=5&turn_to=3",
        "turn_from=2",
        "turn_to=2",
        "turn_from=-1&turn_to=2",
        "turn_from=1&turn_to=%00",
    ],
)
def test_bad_turn_ranges_are_a_json_422(client_in: Client, make_session: Any, query: str) -> None:
    make_session("long", long_rows())
    response = client_in.get(f"/s/long/rows/?{query}")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"


def test_an_unknown_session_range_is_404(client_in: Client, make_session: Any) -> None:
    make_session("long", long_rows())
    assert client_in.get("/s/nope/rows/?turn_from=1&turn_to=2").status_code == 404


def test_live_rows_continue_after_a_window(client_in: Client, make_session: Any) -> None:
    """The page's cursor and turn count are the session's, so live rows number on."""
    slot = make_session("long", long_rows())
    state = page_state(client_in.get("/s/long/").content.decode())
    session_append_row(key=slot.session.key, role="user", content="question 13")
    query = urlencode({"after": state["cursor"], "turns": state["userTurns"]})
    body = client_in.get(f"/s/long/rows/?{query}").json()
    assert turn_ids(body["html"]) == [13]
    assert body["turns_text"] == "13 turns"
