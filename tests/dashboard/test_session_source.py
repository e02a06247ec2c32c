"""Issue 14 item 3 (dashboard part): the session list shows where each session came from
(Claude Code, Codex, the API, the original's format) and its project, and filters by source
across pages."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from tests.fixtures.personas import app_with_client
from transcripts.core.store import TranscriptStore
from transcripts.models import Session
from transcripts.services.agent_import import agent_import_paths

AGENTS = Path(__file__).resolve().parents[1] / "data" / "agent_formats"
LINK = re.compile(r'<a class="btn btn-quiet" rel="(prev|next)" href="([^"]+)">')
SOURCE = re.compile(r'<span class="source source-([a-z-]+)">([^<]*)</span>')
PROJECT = re.compile(r'<dd class="project" title="([^"]*)">([^<]*)</dd>')


def links(body: str) -> dict[str, str]:
    return {rel: html.unescape(href) for rel, href in LINK.findall(body)}


@pytest.fixture
def mixed(store: TranscriptStore, tmp_path: Path, db: Any) -> dict[str, Any]:
    """The Claude Code fixture (a main session and its subagent), the Codex one, and one
    slot created through the turn API."""
    src = tmp_path / "agents"
    shutil.copytree(AGENTS, src)
    for fmt, path in (("claude-code", src / "claude"), ("codex", src / "codex")):
        result = agent_import_paths(paths=[path], fmt=fmt)
        assert not [o for o in result.outcomes if o.status == "bad"], result.outcomes
    _app, _token, api = app_with_client("robot")
    created = api.post("/api/chat/slots", {"name": "from-api"}, content_type="application/json")
    assert created.status_code == 201, created.content
    turn = api.post(
        "/api/chat/slots/from-api/turns",
        {"role": "user", "content": "hello"},
        content_type="application/json",
    )
    assert turn.status_code < 300, turn.content
    return {"api": api, "src": src}


def test_the_list_shows_each_source_and_project(client_in: Client, mixed: dict[str, Any]) -> None:
    body = client_in.get("/").content.decode()
    labels = SOURCE.findall(body)
    assert ("claude-code", "Claude Code") in labels
    assert ("codex", "Codex") in labels
    assert ("api", "API") in labels
    assert len(labels) == Session.objects.count() == 4  # claude main + subagent, codex, api
    projects = set(PROJECT.findall(body))
    assert ("/home/ann/src/dateparse", "~/src/dateparse") in projects  # full path as title
    assert ("/home/ann/src/tinycli", "~/src/tinycli") in projects
    assert Session.objects.get(source="api").project == ""  # the API names no project


def test_the_source_filter_returns_only_its_sessions_across_pages(
    client_in: Client, mixed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kirocrew_site.dashboard.views.PAGE_SIZE", 1)
    page = client_in.get("/", {"source": "claude-code"}).content.decode()
    assert '<option value="claude-code" selected>' in page
    seen = SOURCE.findall(page)
    while "next" in links(page):
        older = links(page)["next"]
        assert parse_qs(urlsplit(older).query)["source"] == ["claude-code"]
        page = client_in.get("/" + older).content.decode()
        seen += SOURCE.findall(page)
    assert seen == [("claude-code", "Claude Code")] * 2  # the main session and its subagent

    for source, label in (("codex", "Codex"), ("api", "API")):
        body = client_in.get("/", {"source": source}).content.decode()
        assert SOURCE.findall(body) == [(source, label)]
        assert "next" not in links(body)


def test_an_unknown_source_filters_nothing_and_says_so(
    client_in: Client, mixed: dict[str, Any]
) -> None:
    """A URL edited by hand (``?source=claude``): every session, and a note naming the
    sources, so the list is not silently unfiltered."""
    for value, shown in (
        ("claude", "“claude”"),
        ("\x00", ""),
        ("claude-code\x00", "“claude-code”"),
    ):
        response = client_in.get("/", {"source": value})
        assert response.status_code == 200
        body = response.content.decode()
        assert len(SOURCE.findall(body)) == 4
        assert (
            f"No such source{' ' + shown if shown else ''}: showing sessions from every source"
            in body
        )
        assert "<code>claude-code</code> (Claude Code)" in body
    hostile = client_in.get("/", {"source": "<b>x</b>"}).content.decode()
    assert "“&lt;b&gt;x&lt;/b&gt;”" in hostile  # escaped like any text
    for value in ("", "codex"):
        assert 'id="unknown-source"' not in client_in.get("/", {"source": value}).content.decode()


def test_the_slot_payload_names_source_and_project(mixed: dict[str, Any]) -> None:
    got = mixed["api"].get("/api/chat/slots/from-api")
    assert got.status_code == 200
    assert (got.json()["source"], got.json()["project"]) == ("api", "")
    listed = mixed["api"].get("/api/chat/slots").json()
    rows = listed["slots"] if isinstance(listed, dict) else listed
    assert [(s["name"], s["source"]) for s in rows] == [("from-api", "api")]
