"""``GET /api/chat/slots/{slot}/transcript`` reads O(page), through real HTTP requests.

Bytes read are counted with the process's own ``/proc/self/io`` (``rchar``): no clock.
Before the offset index, every page folded the whole session, archives included.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client

from tests.fixtures.personas import app_with_client
from transcripts.core.paging import PAGE_INDEX
from transcripts.models import Slot
from transcripts.runtime import get_store

pytestmark = pytest.mark.django_db
KEY = "dashboard:s1"
URL = "/api/chat/slots/s1/transcript"


def rchar() -> int:
    with open("/proc/self/io", "rb") as fp:
        for line in fp.read().decode().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def get(client: Client, query: str = "") -> dict[str, Any]:
    response = client.get(URL + query)
    assert response.status_code == 200, response.content[:300]
    body: dict[str, Any] = json.loads(response.content)
    return body


def bytes_read_by(fn: Callable[[], Any]) -> int:
    before = rchar()
    fn()
    return rchar() - before


@pytest.fixture
def big(settings: Any, kirocrew_home: Any, make_slot: Callable[..., Slot]) -> tuple[Client, int]:
    """A ~3 MB session rotated into several archives, and an owner client."""
    settings.TRANSCRIPT_FSYNC = "never"
    settings.TRANSCRIPT_MAX_BYTES = 600_000
    app, _, client = app_with_client("owner")
    make_slot("s1", app=app, turns=1)
    store = get_store()
    for batch in range(30):
        rows = [
            {"role": "assistant", "content": f"b{batch} r{i} " + "x" * 1000} for i in range(100)
        ]
        store.append_rows(KEY, rows, create=False)
    assert len(store.archive_paths(KEY)) >= 3
    total = sum(p.stat().st_size for p in [store.path(KEY), *store.archive_paths(KEY)])
    PAGE_INDEX.clear()
    return client, total


def test_the_tail_page_after_a_new_row_reads_the_page_not_the_session(
    big: tuple[Client, int],
) -> None:
    client, total = big
    assert total > 2_500_000
    get(client, "?limit=1")  # the process's first read indexes the files once
    store = get_store()
    last = store.append_row(KEY, "user", "one more").ts[-1]
    store.append_row(KEY, "assistant", "the newest")  # what a `row` frame announces
    body: dict[str, Any] = {}

    def tail() -> None:
        body.update(get(client, f"?after={quote(last)}"))

    read = bytes_read_by(tail)
    assert [row["content"] for row in body["rows"]] == ["the newest"]
    assert body["next"] is None
    assert read < 64 * 1024, f"{read} bytes read for a one-row page of a {total}-byte session"


def test_a_page_in_the_oldest_archive_reads_that_page(big: tuple[Client, int]) -> None:
    client, total = big
    everything = store_rows()
    get(client, "?limit=1")
    body: dict[str, Any] = {}

    def first_pages() -> None:
        body.update(get(client, f"?after={quote(everything[2]['ts'])}&limit=5"))

    read = bytes_read_by(first_pages)
    assert body["rows"] == everything[3:8]
    assert body["next"] == everything[7]["ts"]
    assert read < 64 * 1024, f"{read} bytes read for a five-row page of a {total}-byte session"


def store_rows() -> list[dict[str, Any]]:
    return get_store().read_session(KEY).rows


def test_walking_every_page_gives_the_full_fold(
    settings: Any, kirocrew_home: Any, make_slot: Callable[..., Slot]
) -> None:
    """Revisions that target rows on earlier pages, a rotation, a damaged line and, last,
    a position move (answered by the full fold): the walk is always the fold."""
    settings.TRANSCRIPT_FSYNC = "never"
    settings.TRANSCRIPT_MAX_BYTES = 6_000
    app, _, client = app_with_client("owner")
    make_slot("s1", app=app, turns=1)
    store = get_store()
    for i in range(60):
        store.append_row(KEY, "assistant", f"row {i} " + "y" * 200)
        if i % 7 == 3:
            current = store.read_file(KEY).rows
            store.append_revision(KEY, current[0]["ts"], {"content": f"revised at {i}"})
        if i == 30:
            with store.path(KEY).open("ab") as fp:
                fp.write(b"{damaged\n")
    assert store.archive_paths(KEY)
    for move in (False, True):
        if move:
            current = store.read_file(KEY).rows
            store.append_revision(KEY, current[-1]["ts"], {"_after_ts": ""})
        view = store.read_session(KEY)
        seen: list[dict[str, Any]] = []
        query = "?limit=7"
        while True:
            body = get(client, query)
            assert body["report"] == view.report.as_dict()
            seen += body["rows"]
            if body["next"] is None:
                break
            query = f"?limit=7&after={quote(body['next'])}"
        assert seen == view.rows


def test_an_unknown_cursor_is_still_422(big: tuple[Client, int]) -> None:
    client, _ = big
    response = client.get(URL + "?after=" + quote("2001-01-01T00:00:00+00:00"))
    assert response.status_code == 422
    assert json.loads(response.content)["code"] == "invalid_cursor"
