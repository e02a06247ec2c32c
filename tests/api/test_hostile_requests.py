"""Hostile requests: what the other API tests leave out.

Each test sends real requests (Django's test ``Client`` through the whole middleware
stack, or the real ASGI application for the socket) and fails if the hole exists. The
ones marked ``xfail(strict=True)`` are holes found by this pass and not closed yet (see
their reasons); the rest are regression guards, for attacks that held and holes closed.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.test import RequestFactory

from kirocrew_site.middleware import ApiHead
from summaries.core.sidecar import INTENTS, ONE_LINE, sidecar_path
from transcripts.core.keys import transcript_key_for_slot
from transcripts.core.store import TranscriptStore
from transcripts.listing import list_cursor
from transcripts.models import Session, Slot

from .conftest import SECRET, Persona, World, error_of, transcript_bytes

SLOTS = "/api/chat/slots"
# A JSON array nested far past the interpreter's recursion limit: 4 KB of base64, well
# within any server's request-line limit.
DEEP = base64.urlsafe_b64encode(b"[" * 3000).decode().rstrip("=")


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def no_raise(*personas: Persona) -> None:
    """Let a 500 come back as a response (what a real client sees), not as an exception."""
    for persona in personas:
        persona.client.raise_request_exception = False


def body_of(response: Any) -> Any:
    return json.loads(response.content)


# --- 1. forged cursors and page tokens that nest too deep ---------------------------------


def test_api_slot_list_cursor_nested_too_deep_is_422_invalid_cursor(world: World) -> None:
    no_raise(world.owner)
    response = world.owner.call("GET", f"{SLOTS}?cursor={DEEP}")
    assert response.status_code == 422, response.content[:200]
    assert error_of(response)["code"] == "invalid_cursor"


@pytest.mark.parametrize("param", ["after", "before"])
def test_dashboard_list_cursor_nested_too_deep_shows_the_first_page(
    world: World, param: str
) -> None:
    no_raise(world.dashboard)
    response = world.dashboard.call("GET", f"/?{param}={DEEP}")
    # What every other cursor "that is not ours" gets (views.session_list).
    assert response.status_code == 200, response.content[:200]
    assert b"own-slot" in response.content


@pytest.mark.parametrize("param", ["at", "gap"])
def test_dashboard_rows_token_nested_too_deep_is_422_json(world: World, param: str) -> None:
    no_raise(world.dashboard)
    response = world.dashboard.call("GET", f"/s/own-slot/rows/?{param}={DEEP}")
    assert response.status_code == 422, response.content[:200]
    assert error_of(response)["code"] == "invalid_request"


def test_a_cursor_forged_from_a_foreign_session_reaches_no_foreign_slot(world: World) -> None:
    """A cursor is only a position: one naming another app's session (or an id far past
    any row) still lists only the caller's own slots."""
    foreign = Session.objects.get(slot__name="foreign-slot")
    cursors = [
        list_cursor(foreign),
        b64(json.dumps([None, foreign.pk + 1]).encode()),
        b64(b'["9999-12-31T23:59:59+00:00", 99999]'),
        b64(b"[null, 100000000000000000000000]"),  # past 64 bits: no 500
    ]
    for cursor in cursors:
        response = world.owner.call("GET", f"{SLOTS}?cursor={cursor}&limit=200")
        assert response.status_code == 200, response.content[:200]
        names = {slot["name"] for slot in body_of(response)["slots"]}
        assert names <= {"own-slot"}, (cursor, names)
        assert "foreign" not in response.content.decode()


# --- 2. other spellings of a foreign slot's name ----------------------------------------------

# Spellings that reach the foreign slot's transcript key or file stem, case and
# percent-encoding variants, traversal and Unicode look-alikes of "foreign-slot".
FOREIGN_SPELLINGS = [
    "dashboard_foreign-slot",  # transcript_key_for_slot strips this prefix
    "dashboard:foreign-slot",  # ... and takes this one as the key itself
    "dashboard_dashboard_foreign-slot",
    "FOREIGN-SLOT",
    "Foreign-slot",
    "foreign%2Dslot",  # %-encoded "-"
    "foreign-slot%20",
    "foreign-slot%0A",
    "own-slot%2F..%2Fforeign-slot",
    "..%2Fforeign-slot",
    "%EF%BD%86oreign-slot",  # a fullwidth "f" (NFKC folds it to "f")
    "foreign%E2%80%90slot",  # U+2010 hyphen
]


@pytest.mark.parametrize("spelling", FOREIGN_SPELLINGS)
@pytest.mark.parametrize(
    ("method", "suffix"),
    [("GET", "/summary"), ("POST", "/summary"), ("POST", "/fork"), ("GET", "/transcript")],
)
def test_no_spelling_of_a_foreign_name_reaches_it(
    world: World, store: TranscriptStore, spelling: str, method: str, suffix: str
) -> None:
    key = transcript_key_for_slot("foreign-slot")
    before = transcript_bytes("foreign-slot")
    slots_before = Slot.objects.count()
    # The same spelling of a name nobody holds ("fixture-slot").
    absent = spelling.replace("oreign", "ixture").replace("OREIGN", "IXTURE")
    missing = world.owner.call(method, f"{SLOTS}/{absent}{suffix}", {})
    response = world.owner.call(method, f"{SLOTS}/{spelling}{suffix}", {})
    assert response.status_code in {400, 404}, response.content[:300]
    if response.status_code == 404:  # exactly what a missing slot answers
        assert response.content == missing.content
    else:
        assert error_of(response)["code"] == "invalid_slot_name"
    # Nothing was generated for, copied from or written to the foreign slot.
    assert not sidecar_path(store.root, key, INTENTS).exists()
    assert not sidecar_path(store.root, key, ONE_LINE).exists()
    assert transcript_bytes("foreign-slot") == before
    assert Slot.objects.count() == slots_before
    assert "garden" not in response.content.decode()


@pytest.mark.parametrize("suffix", ["/", "/summary/", "/transcript/", "/fork/"])
def test_a_trailing_slash_on_a_foreign_slot_answers_like_one_on_a_missing_slot(
    world: World, suffix: str
) -> None:
    method = "POST" if suffix == "/fork/" else "GET"
    foreign = world.owner.call(method, f"{SLOTS}/foreign-slot{suffix}", {})
    missing = world.owner.call(method, f"{SLOTS}/missing-slot{suffix}", {})
    assert foreign.status_code == missing.status_code == 404
    assert foreign.content == missing.content


# --- 3. forks stay with their owner ---------------------------------------------------------


def test_a_fork_belongs_to_the_forking_owner_and_stays_closed_to_other_apps(
    world: World, store: TranscriptStore
) -> None:
    response = world.owner.call("POST", f"{SLOTS}/own-slot/fork", {"name": "own-child"})
    assert response.status_code == 201, response.content
    assert Slot.objects.get(name="own-child").app == world.owner.app
    for method, suffix in [
        ("GET", ""),
        ("GET", "/summary"),
        ("POST", "/summary"),
        ("GET", "/transcript"),
        ("POST", "/fork"),
    ]:
        denied = world.foreign.call(method, f"{SLOTS}/own-child{suffix}", {})
        assert denied.status_code == 404, (suffix, denied.content)
        assert error_of(denied)["code"] == "slot_not_found"
    listed = body_of(world.foreign.call("GET", SLOTS))["slots"]
    assert "own-child" not in {slot["name"] for slot in listed}
    key = transcript_key_for_slot("own-child")
    assert not sidecar_path(store.root, key, INTENTS).exists()


def test_a_staff_fork_of_an_apps_slot_stays_with_that_app(world: World) -> None:
    assert world.staff is not None
    response = world.staff.call("POST", f"{SLOTS}/foreign-slot/fork", {"name": "staff-child"})
    assert response.status_code == 201, response.content
    # Same owner as the parent: the other app cannot reach it, the parent's app can.
    assert Slot.objects.get(name="staff-child").app == world.foreign.app
    assert world.owner.call("GET", f"{SLOTS}/staff-child/summary").status_code == 404
    assert world.foreign.call("GET", f"{SLOTS}/staff-child/summary").status_code == 200


# --- 4. secrets in the title and a user row's meta --------------------------------------------


def test_a_secret_in_the_title_and_user_meta_never_reaches_a_summary(
    world: World, store: TranscriptStore
) -> None:
    owner = world.owner
    created = owner.call("POST", SLOTS, {"name": "sec1", "title": f"Deploy with {SECRET}"})
    assert created.status_code == 201
    for i in range(3):
        ask = f"Please deploy step {i}; the token is {SECRET} and password=hunter2hunter2"
        assert owner.call("POST", f"{SLOTS}/sec1/turns", {"content": ask}).status_code == 201
        row = {"role": "user", "content": f"see meta {i}", "meta": {"note": SECRET}}
        assert owner.call("POST", f"{SLOTS}/sec1/rows", row).status_code == 201
        answer = {"role": "assistant", "content": f"Done step {i}. Ran pytest: 3 passed."}
        assert owner.call("POST", f"{SLOTS}/sec1/rows", answer).status_code == 201
        end = owner.call("POST", f"{SLOTS}/sec1/turns/end", {"stop_reason": "end_turn"})
        assert end.status_code == 200
    posted = owner.call("POST", f"{SLOTS}/sec1/summary")
    assert posted.status_code == 200, posted.content
    served = [posted.content, owner.call("GET", f"{SLOTS}/sec1/summary").content]
    key = transcript_key_for_slot("sec1")
    written = [sidecar_path(store.root, key, kind).read_bytes() for kind in (INTENTS, ONE_LINE)]
    for blob in served + written:
        assert SECRET.encode() not in blob
        assert b"hunter2hunter2" not in blob
    assert b"[REDACTED" in served[1]  # the search looked where the secret would have been
    # Every other file the summarizer keeps (state, markers) is free of it too.
    for path in Path(store.root).rglob("*"):
        if path.is_file() and not path.name.endswith((".jsonl", ".lock")):
            assert SECRET.encode() not in path.read_bytes(), path


# --- 5. methods ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/health", f"{SLOTS}/own-slot", f"{SLOTS}/own-slot/summary"])
def test_head_on_a_read_route_answers_like_get_without_a_body(world: World, path: str) -> None:
    """Closed (was a 405): RFC 9110 §9.1, servers MUST support HEAD wherever they support GET."""
    get = world.owner.call("GET", path)
    head = world.owner.call("HEAD", path)
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    assert head["Content-Type"] == get["Content-Type"]
    assert head["Content-Length"] == str(len(get.content))


@pytest.mark.parametrize("path", [f"{SLOTS}/foreign-slot", f"{SLOTS}/foreign-slot/summary"])
def test_head_on_a_foreign_slot_answers_exactly_like_a_missing_one(world: World, path: str) -> None:
    foreign = world.owner.call("HEAD", path)
    missing = world.owner.call("HEAD", path.replace("foreign-slot", "missing-slot"))
    assert foreign.status_code == missing.status_code == 404
    assert foreign.content == missing.content == b""
    assert dict(foreign.headers) == dict(missing.headers)


def test_the_head_middleware_itself_drops_the_body_and_restores_the_method() -> None:
    """The test ``Client`` drops a HEAD body on its own; Django's ASGI handler (daphne)
    sends whatever it is given, so the middleware must drop it."""
    seen: list[str] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(str(request.method))
        return JsonResponse({"ok": True})

    request = RequestFactory().head("/api/health")
    response = ApiHead(view)(request)
    assert isinstance(response, HttpResponse)
    assert (seen, request.method) == (["GET"], "HEAD")
    assert response.content == b""
    assert response["Content-Length"] == str(len(b'{"ok": true}'))
    page = RequestFactory().head("/login/")  # outside /api/: left to Django's own views
    untouched = ApiHead(view)(page)
    assert isinstance(untouched, HttpResponse)
    assert untouched.content == b'{"ok": true}'
    assert seen[-1] == page.method == "HEAD"


def test_head_on_a_write_only_route_is_still_405_and_a_head_never_writes(world: World) -> None:
    before = transcript_bytes("own-slot")
    response = world.owner.call("HEAD", f"{SLOTS}/own-slot/turns")
    assert response.status_code == 405
    assert response.content == b""
    assert response["Allow"] == "POST"
    assert transcript_bytes("own-slot") == before
    anonymous = world.anonymous.call("HEAD", "/api/health")
    assert anonymous.status_code == 401  # authenticated like GET
    assert anonymous.content == b""


def test_head_on_a_foreign_slot_reveals_nothing_a_missing_one_does_not(world: World) -> None:
    for suffix in ("", "/summary", "/transcript"):
        foreign = world.owner.call("HEAD", f"{SLOTS}/foreign-slot{suffix}")
        missing = world.owner.call("HEAD", f"{SLOTS}/missing-slot{suffix}")
        assert foreign.status_code == missing.status_code
        assert foreign.content == missing.content == b""
        assert foreign.get("Allow") == missing.get("Allow")


# --- 6. CSRF on the dashboard's own POSTs ---------------------------------------------------


def test_logout_without_the_csrf_token_is_refused_and_keeps_the_session(world: World) -> None:
    client = world.dashboard.client
    assert SESSION_KEY in client.session
    refused = client.post("/logout/")  # no X-CSRFToken, no form token
    assert refused.status_code == 403
    assert SESSION_KEY in client.session
    assert client.get("/logout/").status_code == 405  # a GET (an <img>) logs nobody out
    assert SESSION_KEY in client.session
    allowed = client.post("/logout/", headers={"X-CSRFToken": world.dashboard.csrf or ""})
    assert allowed.status_code in {200, 302}
    assert SESSION_KEY not in client.session


def test_settings_post_with_a_token_for_another_cookie_is_refused(
    world: World, kirocrew_home: Path
) -> None:
    assert world.staff is not None
    client = world.staff.client
    # The token of another browser (the plain dashboard user's) does not match this cookie.
    response = client.post(
        "/settings/", {"enabled": "off"}, headers={"X-CSRFToken": "x" * 32 + "y" * 32}
    )
    assert response.status_code == 403
    config = json.loads((kirocrew_home / "config.json").read_text())
    assert config["session_summary"]["enabled"] is True  # still on, as the world set it


def test_a_dashboard_summary_post_with_a_cross_site_origin_is_refused(
    world: World, store: TranscriptStore
) -> None:
    """The panel's Summarize button POST: even with a valid token and cookie, a request
    whose Origin is another site is refused (Django's Origin check), before any pass."""
    response = world.dashboard.call(
        "POST", f"{SLOTS}/own-slot/summary", headers={"Origin": "https://evil.example"}
    )
    assert response.status_code == 403
    assert error_of(response)["code"] == "csrf_failed"
    key = transcript_key_for_slot("own-slot")
    assert not sidecar_path(store.root, key, INTENTS).exists()


# --- 7. bodies -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"role": "assistant", "content": "x", "meta": {"k": "' + b"\xc3\x28" + b'"}}',
        b'{"role": "assistant", "content": "x"}\x00',
        b'{"role": "assistant", "content": "x", "role": "no-such-role"}',
        b'{"role": "assistant", "content": "x"}{"role": "assistant", "content": "y"}',
    ],
    ids=["invalid-utf8-in-a-string", "trailing-nul", "duplicate-key-last-wins", "two-documents"],
)
def test_hostile_bodies_are_clean_4xx_json_for_apps_and_dashboard_users(
    world: World, raw: bytes
) -> None:
    no_raise(world.owner, world.dashboard)
    for persona, slot in ((world.owner, "own-slot"), (world.dashboard, "unscoped-slot")):
        before = transcript_bytes(slot)
        response = persona.call("POST", f"{SLOTS}/{slot}/rows", raw=raw)
        assert 400 <= response.status_code < 500, (persona.name, response.content[:200])
        assert error_of(response)["code"] in {"bad_request", "invalid_request"}
        assert transcript_bytes(slot) == before


# --- 8. the socket after a token rotation or a logout ---------------------------------------
# In tests/realtime/test_socket_revocation.py (with the realtime fixtures they need).
