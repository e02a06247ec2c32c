"""The sessions list's search: what was said, as escaped snippets linking to the turn."""

from __future__ import annotations

import re

from tests.search.conftest import Caller

HOSTILE = 'Use the zebra build: <script>alert("x")</script><img src=x onerror=alert(1)> done'


def test_a_snippet_is_escaped_text_with_marked_matches(
    apps: tuple[Caller, Caller], dashboard: Caller
) -> None:
    alpha, _ = apps
    alpha.turn("alpha-1", "How do we build?", HOSTILE)

    page = dashboard.client.get("/", {"q": "zebra"}).content.decode()

    hits = page[page.index('id="search-hits"') :]
    assert "<mark>zebra</mark>" in hits
    # (PostgreSQL's ts_headline drops what its parser reads as a tag pair; FTS5 keeps it.)
    assert "&lt;img src=x onerror=alert(1)&gt;" in hits
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert 'href="/s/alpha-1/#turn-1"' in hits


def test_a_highlight_cannot_be_faked_by_the_text(
    apps: tuple[Caller, Caller], dashboard: Caller
) -> None:
    alpha, _ = apps
    # The engines' own match markers, typed into a transcript, mark nothing.
    alpha.turn("alpha-1", "Note", "the \ue000fake\ue001 marker and the yak")
    page = dashboard.client.get("/", {"q": "yak"}).content.decode()
    hits = page[page.index('id="search-hits"') :]
    assert re.findall(r"<mark>([^<]*)</mark>", hits) == ["yak"]


def test_the_app_filter_scopes_the_text_search(
    apps: tuple[Caller, Caller], dashboard: Caller
) -> None:
    alpha, beta = apps
    alpha.turn("alpha-1", "Discuss the marmot", "Marmot discussed.")
    beta.turn("beta-1", "Discuss the marmot too", "Also discussed.")

    every = dashboard.client.get("/", {"q": "marmot"}).content.decode()
    only_beta = dashboard.client.get("/", {"q": "marmot", "app": "beta"}).content.decode()

    assert "/s/alpha-1/" in every
    assert "/s/beta-1/" in every
    hits = only_beta[only_beta.index('id="search-hits"') :]
    assert "/s/beta-1/" in hits
    assert "/s/alpha-1/" not in hits


def test_text_found_only_in_a_transcript_is_listed_with_no_title_match(
    apps: tuple[Caller, Caller], dashboard: Caller
) -> None:
    alpha, _ = apps
    alpha.turn("alpha-1", "Where did we decide the capybara rule?", "Here.")
    page = dashboard.client.get("/", {"q": "capybara"}).content.decode()
    assert "No sessions match" not in page
    assert "No sessions yet" not in page
    assert "decide the <mark>capybara</mark> rule" in page
