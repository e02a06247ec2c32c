"""Reading the folded transcript (paging, fold report), rewind and fork."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot

from .conftest import Persona, error_of

URL = "/api/chat/slots/s1"
KEY = "dashboard:s1"


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app, turns=3)  # six rows


def page(owner: Persona, query: str = "", slot: str = "s1") -> dict[str, Any]:
    response = owner.call("GET", f"/api/chat/slots/{slot}/transcript{query}")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = json.loads(response.content)
    assert set(body) == {"rows", "report", "next"}
    return body


def test_the_whole_transcript_in_one_page(owner: Persona, s1: Slot, store: TranscriptStore) -> None:
    body = page(owner)
    assert [r["role"] for r in body["rows"]] == ["user", "assistant"] * 3
    assert body["rows"] == store.read_session(KEY).rows
    assert body["next"] is None
    assert set(body["report"]) >= {"lines", "revisions", "counts", "anomalies"}
    assert body["report"]["counts"] == {}
    assert body["report"]["anomalies"] == []


def test_paging_with_after_and_limit_visits_every_row_once(owner: Persona, s1: Slot) -> None:
    everything = page(owner)["rows"]
    seen: list[dict[str, Any]] = []
    query = "?limit=4"
    pages = 0
    while True:
        body = page(owner, query)
        seen += body["rows"]
        pages += 1
        if body["next"] is None:
            break
        assert body["next"] == body["rows"][-1]["ts"]
        query = f"?limit=4&after={quote(body['next'])}"
    assert pages == 2
    assert seen == everything


def test_paging_exactly_at_the_end_has_no_next(owner: Persona, s1: Slot) -> None:
    assert page(owner, "?limit=6")["next"] is None
    last = page(owner)["rows"][-1]["ts"]
    assert page(owner, f"?after={quote(last)}") == {
        "rows": [],
        "report": page(owner)["report"],
        "next": None,
    }


@pytest.mark.parametrize("query", ["?limit=0", "?limit=1001", "?limit=-1", "?limit=abc"])
def test_a_bad_limit_is_422(owner: Persona, s1: Slot, query: str) -> None:
    response = owner.call("GET", f"{URL}/transcript{query}")
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"


def test_an_unknown_cursor_is_422_invalid_cursor(owner: Persona, s1: Slot) -> None:
    response = owner.call("GET", f"{URL}/transcript?after=2001-01-01T00:00:00%2B00:00")
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_cursor"


def test_the_fold_report_names_a_damaged_line(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    with store.path(KEY).open("ab") as f:
        f.write(b"{this is not json}\n")
    body = page(owner)
    assert len(body["rows"]) == 6
    assert sum(body["report"]["counts"].values()) >= 1
    assert body["report"]["anomalies"]
    assert all(isinstance(a, dict) for a in body["report"]["anomalies"])


def test_rewind_drops_later_rows_and_advances_gen(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    rows = page(owner)["rows"]
    before = store.identity(KEY)
    response = owner.call("POST", f"{URL}/rewind", {"after_ts": rows[1]["ts"]})
    assert response.status_code == 200
    body = json.loads(response.content)
    assert body["name"] == "s1"
    assert body["user_turns"] == 1
    after = store.identity(KEY)
    assert before is not None
    assert after is not None
    assert after.gen == before.gen + 1
    assert page(owner)["rows"] == rows[:2]
    assert store.archive_paths(KEY)  # the dropped rows are archived, not destroyed
    assert Session.objects.get(key=KEY).row_count == 2


def test_rewind_to_an_unknown_row_is_404_row_not_found(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    before = store.path(KEY).read_bytes()
    response = owner.call("POST", f"{URL}/rewind", {"after_ts": "2001-01-01T00:00:00+00:00"})
    assert response.status_code == 404
    assert error_of(response)["code"] == "row_not_found"
    assert store.path(KEY).read_bytes() == before


def test_rewind_during_a_turn_is_409(owner: Persona, s1: Slot, store: TranscriptStore) -> None:
    first = page(owner)["rows"][0]["ts"]
    assert owner.call("POST", f"{URL}/turns", {"content": "more"}).status_code == 201
    before = store.path(KEY).read_bytes()
    response = owner.call("POST", f"{URL}/rewind", {"after_ts": first})
    assert response.status_code == 409
    assert error_of(response)["code"] == "turn_running"
    assert store.path(KEY).read_bytes() == before


@pytest.mark.parametrize("body", [{}, {"after_ts": ""}, {"after_ts": 5}])
def test_rewind_with_a_bad_body_is_422(owner: Persona, s1: Slot, body: dict[str, Any]) -> None:
    response = owner.call("POST", f"{URL}/rewind", body)
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"


def test_fork_reads_the_parents_rows(owner: Persona, s1: Slot, store: TranscriptStore) -> None:
    parent_rows = page(owner)["rows"]
    response = owner.call("POST", f"{URL}/fork", {"name": "s1-child"})
    assert response.status_code == 201
    child = json.loads(response.content)
    assert child["name"] == "s1-child"
    assert child["app"] == "owner-app"
    assert child["user_turns"] == 3
    assert Slot.objects.get(name="s1-child").app == owner.app
    assert page(owner, slot="s1-child")["rows"] == parent_rows
    # The child goes on alone; the parent does not see its rows.
    assert (
        owner.call(
            "POST", "/api/chat/slots/s1-child/rows", {"role": "assistant", "content": "child only"}
        ).status_code
        == 201
    )
    assert len(page(owner, slot="s1-child")["rows"]) == 7
    assert page(owner)["rows"] == parent_rows


def test_fork_without_a_name_picks_one(owner: Persona, s1: Slot) -> None:
    response = owner.call("POST", f"{URL}/fork", {})
    assert response.status_code == 201
    name = json.loads(response.content)["name"]
    assert name != "s1"
    assert Slot.objects.get(name=name).app == owner.app


def test_fork_onto_an_existing_name_is_409(
    owner: Persona, s1: Slot, make_slot: Callable[..., Slot]
) -> None:
    make_slot("taken", app=owner.app)
    response = owner.call("POST", f"{URL}/fork", {"name": "taken"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "slot_exists"


@pytest.mark.parametrize("name", ["a/b", "..", "a..b", "-x", "x" * 129, "a\x00"])
def test_fork_with_an_invalid_name_is_4xx(owner: Persona, s1: Slot, name: str) -> None:
    response = owner.call("POST", f"{URL}/fork", {"name": name})
    assert 400 <= response.status_code < 500
    assert error_of(response)["code"] in {"invalid_slot_name", "invalid_request"}
    assert Slot.objects.count() == 1
