"""Issue 12 item 3: GET /api/chat/slots is keyset-paginated (newest activity first,
``limit`` default 50 and at most 200, ``next`` cursor), and a page's cost does not grow
with the number of slots: a fixed number of queries, whatever the total."""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

import pytest
from django.utils import timezone

from transcripts.listing import PAGE_DEFAULT, PAGE_MAX
from transcripts.models import Session

from .conftest import Persona, error_of

T0 = timezone.now().replace(microsecond=0)


def make(persona: Persona, names: list[str]) -> None:
    for name in names:
        assert persona.call("POST", "/api/chat/slots", {"name": name}).status_code == 201


def set_activity(name: str, when: dt.datetime | None) -> None:
    Session.objects.filter(slot__name=name).update(last_activity=when)


def page(persona: Persona, query: str = "") -> dict[str, Any]:
    response = persona.call("GET", f"/api/chat/slots{query}")
    assert response.status_code == 200, response.content
    return json.loads(response.content)  # type: ignore[no-any-return]


def walk(persona: Persona, limit: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        body = page(persona, f"?limit={limit}" + (f"&cursor={cursor}" if cursor else ""))
        pages.append([s["name"] for s in body["slots"]])
        cursor = body["next"]
        if cursor is None:
            return pages
        assert len(pages) < 50, "the cursor does not advance"


def test_pages_cover_every_slot_once_newest_activity_first(
    owner: Persona, foreign: Persona
) -> None:
    make(owner, ["a", "b", "c", "d", "e", "f", "g"])
    make(foreign, ["theirs"])
    set_activity("a", T0 - dt.timedelta(hours=1))
    set_activity("b", T0)  # b, c and d share one timestamp: the id breaks the tie
    set_activity("c", T0)
    set_activity("d", T0)
    set_activity("e", T0 - dt.timedelta(days=1))
    set_activity("theirs", T0 + dt.timedelta(hours=1))
    # f and g never had a row: last, newest created first.

    pages = walk(owner, 2)

    assert pages == [["d", "c"], ["b", "a"], ["e", "g"], ["f"]]
    assert [s["name"] for s in page(owner)["slots"]] == ["d", "c", "b", "a", "e", "g", "f"]
    assert page(owner)["next"] is None


def test_a_slot_moving_to_the_top_between_pages_skips_and_repeats_nothing_else(
    owner: Persona,
) -> None:
    make(owner, ["a", "b", "c", "d"])
    for i, name in enumerate(["a", "b", "c", "d"]):
        set_activity(name, T0 - dt.timedelta(minutes=i))
    first = page(owner, "?limit=2")
    assert [s["name"] for s in first["slots"]] == ["a", "b"]
    set_activity("d", T0 + dt.timedelta(minutes=5))  # new activity on a later page's slot
    rest = page(owner, f"?limit=2&cursor={first['next']}")
    assert [s["name"] for s in rest["slots"]] == ["c"]
    assert rest["next"] is None


@pytest.mark.parametrize("limit", ["0", "-1", str(PAGE_MAX + 1)])
def test_a_limit_out_of_range_is_422(owner: Persona, limit: str) -> None:
    response = owner.call("GET", f"/api/chat/slots?limit={limit}")
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"


@pytest.mark.parametrize(
    "cursor",
    [
        "not-base64!",
        base64.urlsafe_b64encode(b"[1,2,3]").decode(),
        base64.urlsafe_b64encode(b'["yesterday", 3]').decode(),
        base64.urlsafe_b64encode(b'["2026-01-01T00:00:00", 3]').decode(),  # naive
        base64.urlsafe_b64encode(b'[null, "3"]').decode(),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ],
)
def test_a_forged_cursor_is_422_invalid_cursor(owner: Persona, cursor: str) -> None:
    response = owner.call("GET", f"/api/chat/slots?cursor={cursor}")
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_cursor"


def test_default_and_maximum_page_sizes(owner: Persona) -> None:
    names = [f"s{i:03}" for i in range(PAGE_DEFAULT + 1)]
    make(owner, names)
    first = page(owner)
    assert len(first["slots"]) == PAGE_DEFAULT
    assert first["next"] is not None
    assert len(page(owner, f"?limit={PAGE_MAX}")["slots"]) == PAGE_DEFAULT + 1


def test_a_page_costs_the_same_queries_at_3_and_at_60_slots(
    owner: Persona, django_assert_max_num_queries: Any
) -> None:
    """No query per slot (the owner app, the gist), no COUNT, no OFFSET: the token, the
    sessions with activity and, when those run out, the ones without, whatever the
    total."""
    make(owner, [f"x{i}" for i in range(3)])
    for i in range(3):
        set_activity(f"x{i}", T0 - dt.timedelta(minutes=i))
    with django_assert_max_num_queries(3) as small:
        assert len(page(owner, "?limit=3")["slots"]) == 3
    make(owner, [f"y{i:02}" for i in range(57)])
    for i in range(57):
        set_activity(f"y{i:02}", T0 - dt.timedelta(hours=1, minutes=i))
    cursor = page(owner, "?limit=3")["next"]
    with django_assert_max_num_queries(3) as big:
        body = page(owner, f"?limit=3&cursor={cursor}")
    assert [s["name"] for s in body["slots"]] == ["y00", "y01", "y02"]
    assert all(s["app"] == "owner-app" for s in body["slots"])
    assert not any("OFFSET" in q["sql"] or "COUNT(" in q["sql"] for q in big.captured_queries)
    assert not any("OFFSET" in q["sql"] or "COUNT(" in q["sql"] for q in small.captured_queries)
