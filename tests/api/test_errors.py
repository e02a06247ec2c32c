"""Errors are JSON ``{"error", "code"}`` everywhere: bad bodies, unknown routes, wrong
methods, huge bodies. Never a 500, never HTML, never a traceback, never an echoed secret."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from transcripts.core.store import TranscriptStore
from transcripts.models import Slot

from .conftest import SECRET, Persona, error_of

Send = Callable[..., Any]  # the send_raw fixture

WRITES = [
    ("POST", "/api/chat/slots"),
    ("PATCH", "/api/chat/slots/s1"),
    ("POST", "/api/chat/slots/s1/turns"),
    ("POST", "/api/chat/slots/s1/rows"),
    ("POST", "/api/chat/slots/s1/rows/{ts}/revisions"),
    ("POST", "/api/chat/slots/s1/turns/end"),
    ("POST", "/api/chat/slots/s1/rewind"),
    ("POST", "/api/chat/slots/s1/fork"),
]


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app)


@pytest.fixture
def first_ts(s1: Slot, store: TranscriptStore) -> str:
    return str(store.read_session(s1.session.key).rows[0]["ts"])


@pytest.fixture
def send_raw(owner: Persona, first_ts: str) -> Send:
    """``send_raw(method, path, raw, **kw)``: ``raw`` as the body of a ``WRITES`` route, its
    ``{ts}`` filled with a real row's ts."""

    def send(method: str, path: str, raw: bytes, **kwargs: Any) -> Any:
        return owner.call(method, path.format(ts=quote(first_ts)), raw=raw, **kwargs)

    return send


@pytest.fixture
def before(s1: Slot, store: TranscriptStore) -> bytes:
    """s1's transcript as it is before the request under test."""
    return store.path("dashboard:s1").read_bytes()


def assert_clean_error(response: Any, *statuses: int) -> dict[str, Any]:
    assert response.status_code in statuses, (response.status_code, response.content[:300])
    body = error_of(response)
    text = response.content.decode("utf-8", "replace")
    assert "Traceback" not in text
    assert "<html" not in text.lower()
    assert 'File "' not in text
    assert SECRET not in text
    return body


def unchanged(store: TranscriptStore, before: bytes) -> bool:
    return store.path("dashboard:s1").read_bytes() == before and Slot.objects.count() == 1


def assert_refused_unless_optional(
    response: Any, path: str, store: TranscriptStore, before: bytes, *statuses: int
) -> None:
    """A clean error that wrote nothing; only PATCH, fork and create, whose every field is
    optional, may accept a body that carries none of their fields."""
    if response.status_code < 400:
        assert path.endswith(("/s1", "/fork", "/api/chat/slots")), response.content
        return
    assert_clean_error(response, *statuses)
    assert unchanged(store, before)


@pytest.mark.parametrize(("method", "path"), WRITES)
@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"{bad json}",
        b'{"content": "unterminated',
        b"\xff\xfe\x00",
        b"[" * 50_000,
        b'{"a":' * 50_000,
        b"1" * 5000,
    ],
    ids=["brace", "bad", "unterminated", "binary", "deep-list", "deep-object", "huge-int"],
)
def test_a_malformed_body_is_400_json(
    send_raw: Send, store: TranscriptStore, before: bytes, method: str, path: str, raw: bytes
) -> None:
    assert_clean_error(send_raw(method, path, raw), 400, 422)
    assert unchanged(store, before)


@pytest.mark.parametrize(("method", "path"), WRITES)
@pytest.mark.parametrize(
    "raw", [b"null", b"[]", b'"text"', b"42", b"true", b'{"content": null, "role": []}']
)
def test_a_body_of_the_wrong_shape_is_4xx_json(
    send_raw: Send, store: TranscriptStore, before: bytes, method: str, path: str, raw: bytes
) -> None:
    response = send_raw(method, path, raw)
    assert_refused_unless_optional(response, path, store, before, 400, 422)


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_a_form_encoded_body_is_4xx_json(
    send_raw: Send, store: TranscriptStore, before: bytes, method: str, path: str
) -> None:
    form = b"role=assistant&content=x&name=n"
    response = send_raw(method, path, form, content_type="application/x-www-form-urlencoded")
    assert_refused_unless_optional(response, path, store, before, 400, 415, 422)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/chat/slots", {"name": 5}),
        ("/api/chat/slots", {"title": ["x"]}),
        ("/api/chat/slots", {"memory_mode": "forever"}),
        ("/api/chat/slots/s1/turns", {"content": {"nested": True}}),
        ("/api/chat/slots/s1/turns", {"contents": "typo"}),
        ("/api/chat/slots/s1/rows", {"role": "assistant"}),
        ("/api/chat/slots/s1/rows", {"role": 1, "content": "x"}),
        ("/api/chat/slots/s1/rows", {"role": "assistant", "content": "x", "meta": 3}),
        ("/api/chat/slots/s1/turns/end", {"stop_reason": 1}),
        ("/api/chat/slots/s1/rewind", {"after_ts": None}),
        ("/api/chat/slots/s1/fork", {"name": True}),
    ],
)
def test_wrong_types_and_missing_fields_are_422(
    owner: Persona, store: TranscriptStore, before: bytes, path: str, body: dict[str, Any]
) -> None:
    response = owner.call("POST", path, body)
    assert assert_clean_error(response, 422)["code"] == "invalid_request"
    assert unchanged(store, before)


@pytest.mark.parametrize(
    "path",
    [
        "/api/nope",
        "/api/chat/",
        "/api/chat/slots/s1/nope",
        "/api/chat/slots/s1/",
        "/api/chat/slots/",
        "/api/chat/slots/s1/rows/x/y/z",
        "/api/chat/slots/a/b/c/d/e/f",
    ],
)
@pytest.mark.parametrize("debug", [False, True])
def test_an_unknown_api_route_is_404_json(
    owner: Persona, s1: Slot, settings: Any, path: str, debug: bool
) -> None:
    settings.DEBUG = debug
    for method in ("GET", "POST", "DELETE"):
        response = owner.call(method, path, {})
        assert assert_clean_error(response, 404)["code"] == "not_found"


@pytest.mark.parametrize("persona", ["owner", "dashboard", "anonymous"])
def test_an_unknown_api_route_is_answered_without_reading_the_login_session(
    request: pytest.FixtureRequest, db: None, persona: str
) -> None:
    """A path no route matches gets the API's own 404, not the dashboard's HTML page
    rendered and then replaced: rendering it reads the login session, which adds
    ``Vary: Cookie`` to an answer that does not depend on it."""
    caller: Persona = request.getfixturevalue(persona)
    response = caller.call("GET", "/api/nope", {})
    assert assert_clean_error(response, 404)["code"] == "not_found"
    assert not response.has_header("Vary")


@pytest.mark.parametrize("debug", [False, True])
def test_the_api_root_answers_json(owner: Persona, settings: Any, debug: bool) -> None:
    settings.DEBUG = debug
    assert assert_clean_error(owner.call("GET", "/api/"), 404)["code"] == "not_found"
    # Not an operation, so Django's CSRF check applies to it: still a JSON answer.
    assert_clean_error(owner.call("POST", "/api/", {}), 403, 404, 405)


def test_an_unknown_route_looks_the_same_for_a_foreign_slot(
    owner: Persona, foreign: Persona, make_slot: Callable[..., Slot]
) -> None:
    make_slot("theirs", app=foreign.app)
    a = owner.call("GET", "/api/chat/slots/theirs/")
    b = owner.call("GET", "/api/chat/slots/nobody-has-this/")
    assert (a.status_code, a.content) == (b.status_code, b.content)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/api/chat/slots/s1"),
        ("POST", "/api/chat/slots/s1"),
        ("DELETE", "/api/chat/slots"),
        ("PUT", "/api/chat/slots"),
        ("GET", "/api/chat/slots/s1/turns"),
        ("DELETE", "/api/chat/slots/s1/rows"),
        ("GET", "/api/chat/slots/s1/turns/end"),
        ("POST", "/api/chat/slots/s1/transcript"),
        ("PATCH", "/api/chat/slots/s1/summary"),
        ("OPTIONS", "/api/chat/slots"),
        ("TRACE", "/api/chat/slots/s1"),
    ],
)
@pytest.mark.parametrize("persona", ["owner", "anonymous"])
def test_a_wrong_method_is_405_json(
    request: pytest.FixtureRequest,
    store: TranscriptStore,
    before: bytes,
    method: str,
    path: str,
    persona: str,
) -> None:
    caller: Persona = request.getfixturevalue(persona)
    response = caller.call(method, path, {"title": "x", "content": "y"})
    body = assert_clean_error(response, 405)
    assert body["code"] == "method_not_allowed"
    assert response.has_header("Allow")
    assert method not in response["Allow"]
    assert unchanged(store, before)


def test_a_head_request_to_a_write_route_is_405_without_a_body(owner: Persona, s1: Slot) -> None:
    response = owner.call("HEAD", "/api/chat/slots/s1/turns")
    assert response.status_code == 405
    assert response.has_header("Allow")


@pytest.mark.parametrize("over", [1024, 10 * 1024 * 1024])
def test_a_huge_body_is_413_json(
    owner: Persona, store: TranscriptStore, before: bytes, settings: Any, over: int
) -> None:
    """Over Django's DATA_UPLOAD_MAX_MEMORY_SIZE: refused before parsing, as JSON."""
    content = SECRET + "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + over)
    for path, body in (
        ("/api/chat/slots/s1/rows", {"role": "assistant", "content": content}),
        ("/api/chat/slots/s1/turns", {"content": content}),
        ("/api/chat/slots", {"name": "big", "title": content}),
    ):
        response = owner.call("POST", path, body)
        assert assert_clean_error(response, 413)["code"] == "payload_too_large"
    assert unchanged(store, before)
    assert Slot.objects.get(name="s1").running is False


def test_a_large_body_under_the_limit_is_accepted(
    owner: Persona, s1: Slot, store: TranscriptStore, settings: Any
) -> None:
    content = "y" * min(settings.DATA_UPLOAD_MAX_MEMORY_SIZE - 1024, 3_000_000)
    response = owner.call(
        "POST", "/api/chat/slots/s1/rows", {"role": "assistant", "content": content}
    )
    assert response.status_code == 201
    assert store.read_session("dashboard:s1").rows[-1]["content"] == content


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/chat/slots", {"name": SECRET + "..x"}),
        ("POST", "/api/chat/slots", {"name": SECRET + "/x"}),
        ("POST", "/api/chat/slots", {"name": "-" + SECRET}),
        ("POST", "/api/chat/slots", {"memory_mode": SECRET}),
        ("POST", "/api/chat/slots", {"title": SECRET * 20}),
        ("POST", "/api/chat/slots", {"name": {SECRET: SECRET}}),
        ("PATCH", "/api/chat/slots/s1", {"title": [SECRET]}),
        ("POST", "/api/chat/slots/s1/turns", {"content": {SECRET: 1}}),
        ("POST", "/api/chat/slots/s1/turns", {"content": [SECRET]}),
        ("POST", "/api/chat/slots/s1/rows", {"role": SECRET, "content": "x"}),
        ("POST", "/api/chat/slots/s1/rows", {"role": "assistant", "content": 1, "x": SECRET}),
        ("POST", "/api/chat/slots/s1/rows", {"role": "assistant", "content": "x", "meta": SECRET}),
        (
            "POST",
            "/api/chat/slots/s1/rows",
            {"role": "assistant", "content": "x", "meta": {SECRET: "\ud800"}},
        ),
        ("POST", f"/api/chat/slots/s1/rows/{SECRET}/revisions", {"patch": {"content": "x"}}),
        ("POST", "/api/chat/slots/s1/rows/x/revisions", {"patch": {"ts": SECRET}}),
        ("POST", "/api/chat/slots/s1/rows/x/revisions", {"patch": SECRET}),
        ("POST", "/api/chat/slots/s1/turns/end", {"stop_reason": SECRET * 3}),
        ("POST", "/api/chat/slots/s1/rewind", {"after_ts": SECRET}),
        ("POST", "/api/chat/slots/s1/rewind", {"after_ts": SECRET * 3}),
        ("POST", "/api/chat/slots/s1/fork", {"name": SECRET + "..x"}),
        ("POST", "/api/chat/slots/s1/fork", {"name": SECRET + " x"}),
        ("GET", f"/api/chat/slots/s1/transcript?after={SECRET}", None),
        ("GET", f"/api/chat/slots/s1/transcript?limit={SECRET}", None),
        ("GET", f"/api/chat/slots/{SECRET}..x", None),
        ("GET", f"/api/chat/slots/{SECRET}", None),
        ("GET", f"/api/{SECRET}", None),
        ("PUT", f"/api/chat/slots/{SECRET}", None),
    ],
)
def test_an_error_never_echoes_a_submitted_secret(
    owner: Persona, store: TranscriptStore, before: bytes, method: str, path: str, body: Any
) -> None:
    if body is None:
        response = owner.call(method, path)
    else:
        response = owner.call(method, path, raw=json.dumps(body).encode("utf-8", "surrogatepass"))
    assert_clean_error(response, 400, 404, 405, 409, 422)
    assert unchanged(store, before)


def test_a_secret_in_a_bad_bearer_is_not_echoed(anonymous: Persona, s1: Slot) -> None:
    response = anonymous.call(
        "GET", "/api/chat/slots", headers={"Authorization": f"Bearer {SECRET}"}
    )
    assert_clean_error(response, 401)
    response = anonymous.call(
        "GET", "/api/chat/slots", headers={"Authorization": f"Bearer kc_{SECRET}"}
    )
    assert_clean_error(response, 401)
