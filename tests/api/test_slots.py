"""Slot routes: create, list, get, rename (PATCH), delete."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from summaries.core.sidecar import INTENTS, ONE_LINE, sidecar_path
from transcripts.core.keys import transcript_key_for_slot
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot

from .conftest import Persona, error_of

SLOT_FIELDS = {
    "name",
    "key",
    "title",
    "app",
    "memory_mode",
    "running",
    "user_turns",
    "last_activity",
    "summary",
    "source",  # issue 14: where the session came from (additive)
    "project",
}


def test_create_returns_the_slot_shape(owner: Persona, store: TranscriptStore) -> None:
    response = owner.call(
        "POST", "/api/chat/slots", {"name": "s1", "title": "Login bug", "memory_mode": "persistent"}
    )
    assert response.status_code == 201
    body = json.loads(response.content)
    assert set(body) == SLOT_FIELDS
    assert body == {
        "name": "s1",
        "key": "dashboard:s1",
        "title": "Login bug",
        "app": "owner-app",
        "memory_mode": "persistent",
        "running": False,
        "user_turns": 0,
        "last_activity": None,
        "summary": "",
        "source": "api",
        "project": "",
    }
    assert store.exists("dashboard:s1")
    assert store.read_metadata("dashboard:s1")["title"] == "Login bug"  # type: ignore[index]
    assert Slot.objects.get(name="s1").app == owner.app


def test_create_without_a_name_picks_one(owner: Persona) -> None:
    response = owner.call("POST", "/api/chat/slots", {})
    assert response.status_code == 201
    name = json.loads(response.content)["name"]
    assert Slot.objects.filter(name=name, app=owner.app).exists()


def test_create_twice_is_409_slot_exists(owner: Persona, foreign: Persona) -> None:
    assert owner.call("POST", "/api/chat/slots", {"name": "s1"}).status_code == 201
    again = owner.call("POST", "/api/chat/slots", {"name": "s1"})
    assert again.status_code == 409
    assert error_of(again)["code"] == "slot_exists"
    # Another app learns the same (names are global), and takes nothing over.
    theirs = foreign.call("POST", "/api/chat/slots", {"name": "s1"})
    assert theirs.status_code == 409
    assert Slot.objects.get(name="s1").app == owner.app


def test_create_a_name_aliasing_an_existing_key_is_409(owner: Persona) -> None:
    """``dashboard_s1`` and ``s1`` share the transcript key ``dashboard:s1``."""
    assert owner.call("POST", "/api/chat/slots", {"name": "s1"}).status_code == 201
    response = owner.call("POST", "/api/chat/slots", {"name": "dashboard_s1"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "slot_exists"


@pytest.mark.parametrize(
    "name",
    [
        "a/b",
        "/",
        "..",
        "a..b",
        "../etc",
        "a\x00b",
        "a\nb",
        "a\x7fb",
        "x" * 129,
        "-leading-dash",
        ".hidden",
        "",
        " spaced",
        "sp ace",
        "é",
        "a\\b",
    ],
)
def test_create_with_an_invalid_name_is_a_4xx_json_error(
    owner: Persona, store: TranscriptStore, name: str
) -> None:
    files_before = sorted(p.name for p in store.root.iterdir())
    response = owner.call("POST", "/api/chat/slots", {"name": name})
    assert 400 <= response.status_code < 500
    assert error_of(response)["code"] in {"invalid_slot_name", "invalid_request"}
    assert not Slot.objects.exists()
    assert not Session.objects.exists()
    assert sorted(p.name for p in store.root.iterdir()) == files_before


def test_create_accepts_the_longest_valid_name(owner: Persona) -> None:
    name = "a" + "b" * 127
    response = owner.call("POST", "/api/chat/slots", {"name": name})
    assert response.status_code == 201
    assert json.loads(response.content)["name"] == name


@pytest.mark.parametrize("path_name", ["..", "a..b", "-x", "x" * 129, "a%00b", "%C3%A9"])
def test_an_invalid_name_in_the_path_is_a_4xx_json_error(owner: Persona, path_name: str) -> None:
    for method, suffix in (("GET", ""), ("GET", "/summary"), ("POST", "/turns")):
        response = owner.call(method, f"/api/chat/slots/{path_name}{suffix}", {"content": "x"})
        assert 400 <= response.status_code < 500, (method, suffix, response.content)
        assert error_of(response)["code"] in {"invalid_slot_name", "not_found", "slot_not_found"}


def test_list_has_own_slots_only_newest_activity_first(
    owner: Persona, foreign: Persona, make_slot: Callable[..., Slot]
) -> None:
    older = make_slot("older", app=owner.app)
    make_slot("newer", app=owner.app)
    make_slot("theirs", app=foreign.app)
    make_slot("nobodys", app=None)
    names = [s["name"] for s in json.loads(owner.call("GET", "/api/chat/slots").content)["slots"]]
    assert names == ["newer", "older"]
    # New activity on the older slot moves it to the top.
    assert (
        owner.call(
            "POST", "/api/chat/slots/older/rows", {"role": "assistant", "content": "later"}
        ).status_code
        == 201
    )
    listing = json.loads(owner.call("GET", "/api/chat/slots").content)["slots"]
    assert [s["name"] for s in listing] == ["older", "newer"]
    assert all(set(s) == SLOT_FIELDS for s in listing)
    assert listing[0]["user_turns"] == older.session.user_turns == 2


def test_list_carries_the_one_line_summary(
    owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path
) -> None:
    make_slot("s1", app=owner.app)
    make_slot("s2", app=owner.app)
    before = json.loads(owner.call("GET", "/api/chat/slots").content)["slots"]
    assert [s["summary"] for s in before] == ["", ""]
    assert owner.call("POST", "/api/chat/slots/s1/summary").status_code == 200
    after = {
        s["name"]: s["summary"]
        for s in json.loads(owner.call("GET", "/api/chat/slots").content)["slots"]
    }
    assert after["s2"] == ""
    assert after["s1"]
    assert "\n" not in after["s1"]


def test_get_returns_the_slot(owner: Persona, make_slot: Callable[..., Slot]) -> None:
    slot = make_slot("s1", app=owner.app)
    response = owner.call("GET", "/api/chat/slots/s1")
    assert response.status_code == 200
    body = json.loads(response.content)
    assert set(body) == SLOT_FIELDS
    assert body["key"] == slot.session.key
    assert body["user_turns"] == 2
    assert body["last_activity"] is not None


def test_patch_title_is_a_metadata_edit(
    owner: Persona, make_slot: Callable[..., Slot], store: TranscriptStore
) -> None:
    make_slot("s1", app=owner.app)
    key = transcript_key_for_slot("s1")
    before = store.identity(key)
    rows_before = store.read_session(key).rows
    response = owner.call("PATCH", "/api/chat/slots/s1", {"title": "A better title"})
    assert response.status_code == 200
    assert json.loads(response.content)["title"] == "A better title"
    after = store.identity(key)
    assert before is not None
    assert after is not None
    assert after.sig == before.sig  # mtime unchanged
    assert after.gen == before.gen
    assert store.read_metadata(key)["title"] == "A better title"  # type: ignore[index]
    assert store.read_session(key).rows == rows_before
    assert Session.objects.get(key=key).title == "A better title"


def test_patch_without_a_title_changes_nothing(
    owner: Persona, make_slot: Callable[..., Slot], store: TranscriptStore
) -> None:
    make_slot("s1", app=owner.app)
    before = store.path("dashboard:s1").read_bytes()
    response = owner.call("PATCH", "/api/chat/slots/s1", {})
    assert response.status_code == 200
    assert store.path("dashboard:s1").read_bytes() == before


def test_delete_is_204_and_the_files_are_gone(
    owner: Persona, make_slot: Callable[..., Slot], store: TranscriptStore, enabled_summaries: Path
) -> None:
    slot = make_slot("s1", app=owner.app, turns=3)
    key = slot.session.key
    # Give it every kind of file: an archive (from a rewind) and both summary sidecars.
    fourth = store.read_session(key).rows[3]["ts"]
    assert owner.call("POST", "/api/chat/slots/s1/rewind", {"after_ts": fourth}).status_code == 200
    assert owner.call("POST", "/api/chat/slots/s1/summary").status_code == 200
    assert store.archive_paths(key)
    assert sidecar_path(store.root, key, INTENTS).exists()
    assert sidecar_path(store.root, key, ONE_LINE).exists()
    response = owner.call("DELETE", "/api/chat/slots/s1")
    assert response.status_code == 204
    assert response.content == b""
    assert not store.path(key).exists()
    assert not sidecar_path(store.root, key, INTENTS).exists()
    assert not sidecar_path(store.root, key, ONE_LINE).exists()
    assert not store.archive_paths(key)
    assert not Slot.objects.filter(name="s1").exists()
    assert not Session.objects.filter(key=key).exists()
    gone = owner.call("GET", "/api/chat/slots/s1")
    assert gone.status_code == 404
    assert error_of(gone)["code"] == "slot_not_found"
    again = owner.call("DELETE", "/api/chat/slots/s1")
    assert again.status_code == 404


def test_a_deleted_name_can_be_created_again(
    owner: Persona, make_slot: Callable[..., Slot]
) -> None:
    make_slot("s1", app=owner.app)
    assert owner.call("DELETE", "/api/chat/slots/s1").status_code == 204
    response = owner.call("POST", "/api/chat/slots", {"name": "s1"})
    assert response.status_code == 201
    assert json.loads(response.content)["user_turns"] == 0
