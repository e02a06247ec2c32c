"""Rows nested deeper than the content rule allows, already on disk (an import, an older
writer): every reader answers 200 and reports them, and nothing logs a traceback."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from kirocrew_site.logfilter import TrimRecursionTracebacks
from transcripts.core.content import MAX_DEPTH, TOO_DEEP_MARKER
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot

from .conftest import Persona

URL = "/api/chat/slots/s1"


def nested(depth: int) -> str:
    """JSON text of objects and arrays alternating ``depth`` levels deep (built as text:
    encoding such a value would itself overflow the stack)."""
    opens = "".join('{"k": ' if i % 2 == 0 else "[" for i in range(depth))
    closes = "".join("}" if i % 2 == 0 else "]" for i in reversed(range(depth)))
    return opens + '"bottom"' + closes


def plant_deep_rows(store: TranscriptStore, depth: int) -> None:
    """Append two rows straight to the file, as an import of a foreign transcript would
    (the stdlib writer: any depth, its separators): one whose ``meta`` nests ``depth``
    levels, one whose ``content`` does."""
    lines = (
        '{"role": "tool_result", "content": "deep", "ts": "2099-01-01T00:00:00+00:00", '
        f'"meta": {nested(depth)}}}\n'
        f'{{"role": "tool_result", "content": {nested(depth)}, '
        '"ts": "2099-01-01T00:00:01+00:00"}\n'
    )
    with store.path("dashboard:s1").open("a", encoding="utf-8") as fp:
        fp.write(lines)


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app, turns=1)


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 400, 1000])
def test_transcript_api_reports_a_deep_row(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    depth: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    plant_deep_rows(store, depth)
    with caplog.at_level(logging.INFO):
        response = owner.call("GET", f"{URL}/transcript")
    assert response.status_code == 200, response.content[:300]
    body = json.loads(response.content)
    assert [row["content"] for row in body["rows"][-2:]] == ["deep", TOO_DEEP_MARKER]
    assert TOO_DEEP_MARKER in response.content.decode()
    assert response.content.count(b'{"k":') < MAX_DEPTH
    assert body["report"]["counts"].get("too_deep") == 2
    no_traceback(caplog)


def test_dashboard_session_page_reports_a_deep_row(
    s1: Slot, store: TranscriptStore, dashboard: Persona, caplog: pytest.LogCaptureFixture
) -> None:
    plant_deep_rows(store, 1000)
    with caplog.at_level(logging.INFO):
        page = dashboard.client.get("/s/s1/")
    assert page.status_code == 200
    assert b"nested too deep" in page.content
    no_traceback(caplog)


def test_admin_session_page_reports_a_deep_row(
    s1: Slot, store: TranscriptStore, admin_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    plant_deep_rows(store, 1000)
    with caplog.at_level(logging.INFO):
        page = admin_client.get(reverse("admin:transcripts_session_change", args=[s1.session.pk]))
    assert page.status_code == 200
    assert b"too_deep" in page.content
    no_traceback(caplog)


def test_a_recursion_error_is_logged_with_a_few_frames_not_a_flood() -> None:
    """Whatever still overflows the stack is logged by the configured console handler (the
    one every logger reaches, Django's request logger included) in a few lines."""
    handler = next(
        h
        for h in logging.getLogger().handlers
        if any(isinstance(f, TrimRecursionTracebacks) for f in h.filters)
    )
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous = handler.setStream(stream)

    # Two alternating frames, like the old recursive redaction walk: Python collapses
    # only identical consecutive frames, so this traceback is whole (~100 KB).
    def ping(n: int) -> int:
        return pong(n + 1) + 1

    def pong(n: int) -> int:
        return ping(n + 1) + 1

    try:
        ping(0)
    except RecursionError:
        logging.getLogger("kirocrew_site.api").exception("unhandled API error on GET /x")
    finally:
        handler.setStream(previous)
    logged = stream.getvalue()
    assert "unhandled API error on GET /x" in logged
    assert "RecursionError" in logged
    assert "in ping" in logged  # the frames it kept are the innermost ones
    assert len(logged) < 5_000  # a whole overflow traceback is some 100 KB
