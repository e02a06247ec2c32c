"""Issue 12 item 3: the dashboard's session list pages by cursor ("Older →" / "← Newer"),
with the search and filters carried by the links, and no COUNT or OFFSET per page."""

from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from transcripts.models import App, Session

T0 = timezone.now().replace(microsecond=0)
LINK = re.compile(r'<a class="btn btn-quiet" rel="(prev|next)" href="([^"]+)">')


def titles(body: str) -> list[str]:
    return re.findall(r'<h2 class="session-title">\s*<a href="[^"]*">([^<]*)</a>', body)


def links(body: str) -> dict[str, str]:
    return {rel: html.unescape(href) for rel, href in LINK.findall(body)}


@pytest.fixture
def listed(make_session: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Seven sessions "t0" (newest) … "t6", two of another app; pages of three."""
    monkeypatch.setattr("kirocrew_site.dashboard.views.PAGE_SIZE", 3)
    other = App.objects.create(name="other", token_hash="x" * 64, token_prefix="kc_x")
    names = [f"t{i}" for i in range(7)]
    for i, name in enumerate(names):
        make_session(name, title=f"Report {name}", app=other if i in (2, 5) else None)
        Session.objects.filter(slot__name=name).update(last_activity=T0 - dt.timedelta(hours=i))
    return names


def test_older_and_newer_walk_the_whole_list(client_in: Client, listed: list[str]) -> None:
    first = client_in.get("/").content.decode()
    assert titles(first) == ["Report t0", "Report t1", "Report t2"]
    assert set(links(first)) == {"next"}  # the top: no "Newer"
    assert "Older →" in first

    second = client_in.get("/" + links(first)["next"]).content.decode()
    assert titles(second) == ["Report t3", "Report t4", "Report t5"]
    third = client_in.get("/" + links(second)["next"]).content.decode()
    assert titles(third) == ["Report t6"]
    assert set(links(third)) == {"prev"}  # the end: no "Older"

    back = client_in.get("/" + links(third)["prev"]).content.decode()
    assert titles(back) == ["Report t3", "Report t4", "Report t5"]
    top = client_in.get("/" + links(back)["prev"]).content.decode()
    assert titles(top) == ["Report t0", "Report t1", "Report t2"]
    assert set(links(top)) == {"next"}


def test_the_links_carry_the_search_and_app_filters(client_in: Client, listed: list[str]) -> None:
    first = client_in.get("/", {"q": "Report", "app": "-"}).content.decode()
    assert titles(first) == ["Report t0", "Report t1", "Report t3"]
    older = links(first)["next"]
    assert parse_qs(urlsplit(older).query)["q"] == ["Report"]
    assert parse_qs(urlsplit(older).query)["app"] == ["-"]
    second = client_in.get("/" + older).content.decode()
    assert titles(second) == ["Report t4", "Report t6"]
    assert parse_qs(urlsplit(links(second)["prev"]).query)["q"] == ["Report"]


def test_a_page_runs_no_count_and_no_offset(
    client_in: Client, listed: list[str], django_assert_max_num_queries: Any
) -> None:
    first = client_in.get("/").content.decode()
    with django_assert_max_num_queries(12) as queries:
        assert client_in.get("/" + links(first)["next"]).status_code == 200
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert "COUNT(" not in sql
    assert "OFFSET" not in sql


def test_a_cursor_that_is_not_ours_shows_the_first_page(
    client_in: Client, listed: list[str]
) -> None:
    for bogus in ("nope", "W251bGwsICIzIl0", "%00"):
        response = client_in.get("/", {"after": bogus})
        assert response.status_code == 200
        assert titles(response.content.decode()) == ["Report t0", "Report t1", "Report t2"]
