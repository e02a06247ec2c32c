"""The input boundary: one content rule (transcripts.core.content) for every way content
enters. Nesting past MAX_DEPTH, non-finite numbers, NUL and over-long strings are a 422
JSON error with nothing written; a revision may not change a row's role; dict keys are
redacted like values."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from transcripts.core.content import MAX_DEPTH, MAX_TEXT_CHARS
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot

from .conftest import SECRET, Persona, error_of, transcript_bytes

URL = "/api/chat/slots/s1"


def nested_text(depth: int) -> str:
    """JSON text of ``depth`` objects and arrays inside one another (built as text: encoding
    such a value would overflow the stack of the test itself)."""
    opens = "".join('{"k":' if i % 2 == 0 else "[" for i in range(depth))
    closes = "".join("}" if i % 2 == 0 else "]" for i in reversed(range(depth)))
    return opens + '"x"' + closes


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app, turns=1)


@pytest.fixture
def user_ts(store: TranscriptStore, s1: Slot) -> str:
    """The ts of the slot's (unredacted, as typed) user row."""
    rows = store.read_session("dashboard:s1").rows
    return str(next(row["ts"] for row in rows if row["role"] == "user"))


def refused(owner: Persona, method: str, path: str, raw: str, slot: str = "s1") -> str:
    """Send ``raw`` as the body: a 422 JSON error and the slot's file unchanged; its code."""
    before = transcript_bytes(slot)
    response = owner.call(method, path, raw=raw)
    assert response.status_code == 422, response.content[:300]
    assert transcript_bytes(slot) == before
    return str(error_of(response)["code"])


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# ---------------------------------------------------------------- item 4: nesting


@pytest.mark.parametrize("depth", [MAX_DEPTH, 300, 500, 985, 5000])
def test_meta_nested_past_the_limit_is_422(
    owner: Persona, s1: Slot, depth: int, caplog: pytest.LogCaptureFixture
) -> None:
    # The body itself is one level: a meta of MAX_DEPTH levels makes MAX_DEPTH + 1.
    raw = '{"role": "assistant", "content": "x", "meta": ' + nested_text(depth) + "}"
    with caplog.at_level(logging.INFO):
        assert refused(owner, "POST", f"{URL}/rows", raw) == "invalid_request"
    no_traceback(caplog)


def test_nesting_message_names_the_limit_never_the_value(owner: Persona, s1: Slot) -> None:
    raw = '{"role": "assistant", "content": "x", "meta": ' + nested_text(500) + "}"
    response = owner.call("POST", f"{URL}/rows", raw=raw)
    assert error_of(response)["error"] == ("invalid request: body: nested more than 64 levels deep")


@pytest.mark.parametrize("depth", [MAX_DEPTH, 985, 5000])
def test_patch_nested_past_the_limit_is_422(
    owner: Persona, s1: Slot, user_ts: str, depth: int, caplog: pytest.LogCaptureFixture
) -> None:
    raw = '{"patch": {"meta": ' + nested_text(depth - 1) + "}}"
    with caplog.at_level(logging.INFO):
        assert refused(owner, "POST", f"{URL}/rows/{user_ts}/revisions", raw) == "invalid_request"
    no_traceback(caplog)


def test_meta_at_the_limit_is_stored_and_read_back(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    meta = nested_text(MAX_DEPTH - 1)  # the body is exactly MAX_DEPTH levels deep
    raw = '{"role": "assistant", "content": "x", "meta": ' + meta + "}"
    response = owner.call("POST", f"{URL}/rows", raw=raw)
    assert response.status_code == 201, response.content[:300]
    page = json.loads(owner.call("GET", f"{URL}/transcript").content)
    assert page["rows"][-1]["meta"] == json.loads(meta)
    assert page["report"]["counts"] == {}


# ---------------------------------------------------------------- item 5: NUL


def test_slot_create_with_nul_is_422_and_the_name_stays_free(owner: Persona, store: Any) -> None:
    response = owner.call("POST", "/api/chat/slots", raw='{"name": "n1", "title": "a\\u0000b"}')
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"
    assert transcript_bytes("n1") is None
    assert not Slot.objects.filter(name="n1").exists()
    assert owner.call("GET", "/api/chat/slots/n1").status_code == 404
    created = owner.call("POST", "/api/chat/slots", {"name": "n1", "title": "ab"})
    assert created.status_code == 201


def test_slot_patch_with_nul_is_422_and_writes_nothing(owner: Persona, s1: Slot) -> None:
    assert refused(owner, "PATCH", URL, '{"title": "a\\u0000b"}') == "invalid_request"
    assert Session.objects.get(key="dashboard:s1").title == ""
    assert json.loads(owner.call("GET", URL).content)["title"] == ""


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        ("rows", '{"role": "assistant", "content": "a\\u0000b"}'),
        ("rows", '{"role": "tool", "content": "x", "meta": {"k\\u0000": 1}}'),
        ("turns", '{"content": "a\\u0000b"}'),
        ("turns/end", '{"stop_reason": "end\\u0000turn"}'),
    ],
)
def test_nul_anywhere_in_a_body_is_422(owner: Persona, s1: Slot, path: str, raw: str) -> None:
    assert refused(owner, "POST", f"{URL}/{path}", raw) == "invalid_request"
    assert not Slot.objects.get(name="s1").running


def test_nul_in_a_patch_is_422(owner: Persona, s1: Slot, user_ts: str) -> None:
    raw = '{"patch": {"meta": {"note": "a\\u0000b"}}}'
    assert refused(owner, "POST", f"{URL}/rows/{user_ts}/revisions", raw) == "invalid_request"


def test_dashboard_list_with_nul_in_the_query_is_a_page(dashboard: Persona, s1: Slot) -> None:
    for query in ("q=%00", "q=a%00b", "app=%00", "state=%00"):
        page = dashboard.client.get(f"/?{query}")
        assert page.status_code == 200, query
        assert page["Content-Type"].startswith("text/html")


# ---------------------------------------------------------------- item 9: redaction


def test_a_revision_may_not_change_role(owner: Persona, s1: Slot, store: TranscriptStore) -> None:
    turn = owner.call("POST", f"{URL}/turns", {"content": f"my token is {SECRET}"})
    ts = json.loads(turn.content)["ts"]
    raw = json.dumps({"patch": {"role": "assistant"}})
    assert refused(owner, "POST", f"{URL}/rows/{ts}/revisions", raw) == "record_rejected"
    rows = json.loads(owner.call("GET", f"{URL}/transcript").content)["rows"]
    assert [row["role"] for row in rows if SECRET in str(row.get("content"))] == ["user"]


def test_meta_and_patch_keys_are_redacted(owner: Persona, s1: Slot, store: TranscriptStore) -> None:
    row = owner.call(
        "POST", f"{URL}/rows", {"role": "assistant", "content": "ok", "meta": {SECRET: {SECRET: 1}}}
    )
    assert row.status_code == 201
    ts = json.loads(row.content)["ts"]
    revision = owner.call(
        "POST", f"{URL}/rows/{ts}/revisions", {"patch": {"meta": {"x": {SECRET: "v"}}, SECRET: 2}}
    )
    assert revision.status_code == 201
    on_disk = transcript_bytes("s1") or b""
    assert SECRET.encode() not in on_disk
    assert b"REDACTED" in on_disk
    folded = json.loads(owner.call("GET", f"{URL}/transcript").content)["rows"][-1]
    assert SECRET not in json.dumps(folded)


def test_two_keys_that_redact_alike_both_stay(owner: Persona, s1: Slot) -> None:
    other = "ghp_" + "B" * 36
    meta = {SECRET: 1, other: 2}
    row = owner.call("POST", f"{URL}/rows", {"role": "assistant", "content": "ok", "meta": meta})
    assert row.status_code == 201
    stored = json.loads(owner.call("GET", f"{URL}/transcript").content)["rows"][-1]["meta"]
    assert sorted(stored.values()) == [1, 2]
    assert SECRET not in json.dumps(stored)
    assert other not in json.dumps(stored)


# ---------------------------------------------------------------- item 10: numbers


@pytest.mark.parametrize("number", ["NaN", "-Infinity", "Infinity", "1e400", "-1e400"])
def test_non_json_numbers_in_meta_are_422(owner: Persona, s1: Slot, number: str) -> None:
    raw = '{"role": "assistant", "content": "x", "meta": {"n": ' + number + "}}"
    assert refused(owner, "POST", f"{URL}/rows", raw) == "invalid_request"


@pytest.mark.parametrize("number", ["NaN", "1e400"])
def test_non_json_numbers_in_a_patch_are_422(
    owner: Persona, s1: Slot, user_ts: str, number: str
) -> None:
    raw = '{"patch": {"meta": {"n": [' + number + "]}}}"
    assert refused(owner, "POST", f"{URL}/rows/{user_ts}/revisions", raw) == "invalid_request"


def test_integers_past_64_bits_are_422(owner: Persona, s1: Slot) -> None:
    raw = '{"role": "assistant", "content": "x", "meta": {"n": 123456789012345678901234567890}}'
    assert refused(owner, "POST", f"{URL}/rows", raw) == "invalid_request"


# ---------------------------------------------------------------- item 11: one size rule


def test_a_revision_patch_is_capped_like_a_row(owner: Persona, s1: Slot, user_ts: str) -> None:
    big = "x" * (MAX_TEXT_CHARS + 1)  # about 4 MB: under the 8 MiB line limit
    row = json.dumps({"role": "assistant", "content": big})
    assert refused(owner, "POST", f"{URL}/rows", row) == "invalid_request"
    for patch in ({"content": big}, {"meta": {"blob": big}}):
        raw = json.dumps({"patch": patch})
        assert refused(owner, "POST", f"{URL}/rows/{user_ts}/revisions", raw) == "invalid_request"
    meta = json.dumps({"role": "assistant", "content": "x", "meta": {"blob": big}})
    assert refused(owner, "POST", f"{URL}/rows", meta) == "invalid_request"
