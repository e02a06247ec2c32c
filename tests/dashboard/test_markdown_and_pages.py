"""Issue 13, the pages: Markdown rendered on the server and sanitized (the transcript, the
live rows partial, the panel's texts), the favicon, the settings page and the API docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kirocrew_site.dashboard.positions import Position
from kirocrew_site.dashboard.present import EVIDENCE_LABELS
from summaries.core.payload import EVIDENCE_KINDS
from summaries.services import summary_generate
from transcripts.services import session_append_row

ROOT = Path(__file__).resolve().parents[2]


# --- 9. Markdown, rendered on the server and sanitized ----------------------------------------

XSS_ROWS = [
    ("user", "Make it **bold**, keep `code`. <script>alert(1)</script> [x](javascript:alert(2))"),
    (
        "assistant",
        '<img src=x onerror="alert(3)"> See [docs](https://example.com) and\n\n'
        "```\n" + "\n".join(f"line {i}" for i in range(40)) + "\n```",
    ),
    ("tool_result", "**tool** output stays code"),
]


@pytest.mark.django_db
def test_transcript_markdown_is_rendered_and_raw_html_never_reaches_the_page(
    make_session, client_in
):
    make_session("md", XSS_ROWS)
    page = client_in.get("/s/md/").content.decode()
    transcript = page[page.index('id="transcript"') :]
    assert "<strong>bold</strong>" in transcript
    assert "<code>code</code>" in transcript
    assert "<script>alert" not in transcript
    assert "&lt;script&gt;" in transcript  # shown as text
    assert "<img" not in transcript
    assert 'href="javascript' not in transcript
    assert 'href="https://example.com" rel="noopener noreferrer nofollow"' in transcript
    assert '<details class="code-long"><summary>Code, 40 lines</summary>' in transcript
    assert "<strong>tool</strong>" not in transcript  # tool output is shown as code


@pytest.mark.django_db
def test_the_live_rows_partial_renders_the_same_rows_and_count(make_session, client_in):
    slot = make_session("live", [("user", "First **ask**"), ("assistant", "Done.")])
    page = client_in.get("/s/live/").content.decode()
    first = client_in.get("/s/live/rows/").json()  # no position: from the first row
    assert first["turns_text"] == "1 turn"
    assert first["html"].strip()
    assert first["html"].split("<li")[1] in page
    session_append_row(key=slot.session.key, role="user", content="Second <b>ask</b>")
    more = client_in.get("/s/live/rows/", {"at": first["cursor"], "why": "user"}).json()
    assert more["turns_text"] == "2 turns"
    assert more["replace"] == ""
    assert 'id="turn-2"' in more["html"]
    assert "&lt;b&gt;ask&lt;/b&gt;" in more["html"]
    assert 'id="turn-1"' not in more["html"]
    # The live row is byte for byte the row a reload renders, and the count reads the same.
    reloaded = client_in.get("/s/live/").content.decode()
    assert more["html"] in reloaded
    assert '<span id="turn-count">2 turns</span>' in reloaded


@pytest.mark.django_db
def test_the_rows_partial_answers_a_bad_cursor_and_a_missing_slot_in_json(make_session, client_in):
    make_session("live", [("user", "hello")])
    gone = Position.start("2001-01-01T00:00:00+00:00", 0).token()  # rewound away since
    bad = client_in.get("/s/live/rows/", {"at": gone})
    assert bad.status_code == 422
    assert bad.json() == {
        "error": "the position names no row of this session",
        "code": "invalid_cursor",
    }
    assert client_in.get("/s/nope/rows/").status_code == 404


@pytest.mark.django_db
def test_the_panel_read_renders_summary_texts(make_session, client_in, enabled_summaries):
    make_session(
        "panel",
        [("user", "Fix the **CSV** export"), ("assistant", "Fixed."), ("user", "Add `--since`")],
    )
    summary_generate(slot_name="panel", force=True)
    body = client_in.get("/s/panel/summary/").json()
    assert body["intents"]
    rendered = body["rendered"]
    assert any("<strong>CSV</strong>" in html for html in rendered.values()), rendered
    assert all("<script" not in html for html in rendered.values())


def test_every_evidence_kind_has_one_label() -> None:
    """The panel shows a kind without a label as "no evidence" (panel.js takes the table
    from the page state): every kind the summarizer can give must have one."""
    assert set(EVIDENCE_LABELS) == set(EVIDENCE_KINDS)


# --- 11. pages -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_favicon_is_linked_and_served(client_in):
    page = client_in.get("/").content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in page
    response = client_in.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/favicon.svg"
    assert (ROOT / "static" / "favicon.svg").read_text().startswith("<svg")


@pytest.mark.django_db
def test_the_settings_page_shows_no_filesystem_path_and_one_key_font(staff_client, settings):
    page = staff_client.get("/settings/").content.decode()
    assert str(settings.KIROCREW_HOME) not in page
    assert str(settings.KIROCREW_CONFIG_PATH) not in page
    keys = re.findall(r"<dt>(.*?)</dt>", page)
    assert keys
    assert all(key.startswith("<code>") for key in keys), keys


def test_the_api_docs_file_slot_create_and_list_under_slots(client):
    schema = client.get("/api/openapi.json").json()
    tags = {
        (path, method): operation["tags"]
        for path, ops in schema["paths"].items()
        for method, operation in ops.items()
    }
    slots = next(p for p in schema["paths"] if p.endswith("/chat/slots"))
    assert tags[(slots, "post")] == ["slots"]
    assert tags[(slots, "get")] == ["slots"]
