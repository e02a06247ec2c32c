"""An imported row shows when its agent wrote it (``meta.source_ts``), on the page and in
the rows the socket's frames fetch, with the import's time only as a tooltip."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, copy_tree
from transcripts.models import Slot

pytestmark = pytest.mark.django_db

PROMPT_AT = "2026-11-30T10:04:00.000Z"  # the fixture's first prompt, as Claude Code wrote it
TIME = re.compile(r'<time datetime="([^"]*)"(?: title="([^"]*)")?>([^<]*)</time>')


@pytest.fixture
def imported(tmp_path: Path, store: Any) -> str:
    src = copy_tree(tmp_path / "src")
    call_command("import_transcripts", str(src / CLAUDE_FILE), stdout=StringIO())
    return Slot.objects.get(session__key=f"claude:{CLAUDE_SID}").name


def prompt_time(html: str) -> tuple[str, str, str]:
    """The ``<time>`` of turn 1's row (the first prompt)."""
    row = html[html.index('id="turn-1"') :]
    found = TIME.search(row[: row.index("</li>")])
    assert found is not None
    at, title, shown = found.groups()
    return at, title or "", shown


def test_the_session_page_shows_when_the_agent_wrote_the_row(
    client_in: Client, imported: str
) -> None:
    body = client_in.get(f"/s/{imported}/").content.decode()
    at, title, shown = prompt_time(body)
    assert (at, shown) == (PROMPT_AT, "2026-11-30 10:04")
    assert title.startswith("imported 20")  # the import's own time, only as a tooltip
    assert "2026-11-30" not in title


def test_rows_fetched_for_a_socket_frame_show_the_same_time(
    client_in: Client, imported: str
) -> None:
    html = client_in.get(f"/s/{imported}/rows/").json()["html"]
    at, title, shown = prompt_time(html)
    assert (at, shown) == (PROMPT_AT, "2026-11-30 10:04")
    assert title.startswith("imported 20")


def test_a_row_written_here_shows_its_own_time_without_a_tooltip(
    client_in: Client, make_session: Any
) -> None:
    make_session("plain", [("user", "The date parser test fails on ISO weeks")])
    at, title, shown = prompt_time(client_in.get("/s/plain/").content.decode())
    assert title == ""
    assert shown == at[:16].replace("T", " ")


def test_a_slash_command_is_shown_as_a_command(client_in: Client, imported: str) -> None:
    body = client_in.get(f"/s/{imported}/").content.decode()
    row = body[: body.index("<code>/clear</code>")]
    assert row[row.rindex('<span class="who">') :].startswith('<span class="who">Command</span>')
