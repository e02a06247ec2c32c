"""A summary is behind the conversation only when the conversation moved: a bookkeeping
line (a revision of a row, a metadata edit) leaves the panel's banner, the list's
"Summary behind" chip and the project page's badge off; a new turn turns all three on."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from summaries.services import summary_generate
from transcripts.runtime import get_store
from transcripts.services import (
    session_append_revision,
    session_append_row,
    session_set_title,
    session_update_metadata,
)

pytestmark = pytest.mark.django_db

PROJECT = "/srv/notes"


@pytest.fixture
def summarized(make_session: Any, configure: Any) -> Any:
    configure(enabled=True, min_user_turns=1)
    slot = make_session(
        "notes",
        [
            ("user", "Add a logout button to the header"),
            ("assistant", "Added the logout button to templates/base.html."),
        ],
        title="Notes",
    )
    session_update_metadata(key=slot.session.key, updates={"cwd": PROJECT})
    assert summary_generate(slot_name="notes", force=True).reason == "stored"
    return slot


def behind(client: Client) -> tuple[bool, bool, bool]:
    panel = client.get("/s/notes/summary/").json()["stale"]
    chip = "Summary behind" in client.get("/").content.decode()
    project = client.get("/project/", {"path": PROJECT}).content.decode()
    assert "Add a logout button" in project  # the intent is listed on its project's page
    return panel, chip, "Summary behind" in project


def test_bookkeeping_lines_do_not_put_the_summary_behind(
    client_in: Client, summarized: Any
) -> None:
    key = summarized.session.key
    target = get_store().read_session(key).rows[-1]["ts"]
    session_append_revision(key=key, target_ts=target, patch={"content": "Added it (fixed)."})
    session_set_title(key=key, title="Header work")
    assert behind(client_in) == (False, False, False)


def test_a_new_turn_puts_the_summary_behind(client_in: Client, summarized: Any) -> None:
    session_append_row(key=summarized.session.key, role="user", content="Now add a test")
    assert behind(client_in) == (True, True, True)
