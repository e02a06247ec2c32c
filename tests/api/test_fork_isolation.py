"""A fork reads only its own file: the seed is copied in at fork time (issue 9, item 1).

Two apps drive the real routes: B forks a slot and deletes the parent, A then takes the
parent's name (or an alias of its file stem) and writes a secret. B's fork must keep
showing exactly its seed rows, and B's forced summary of the fork must not see A's text.
A ``forked_from`` naming another owner's session in an imported file reaches nothing.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import session_import_paths

from .conftest import Persona, error_of

SLOTS = "/api/chat/slots"
SECRET = "my password is hunter2"


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    return json.loads(response.content) if response.content else None


def create(persona: Persona, name: str) -> None:
    ok(persona.call("POST", SLOTS, {"name": name}), 201)


def seed_rows(persona: Persona, slot: str, words: str) -> None:
    """Three rows: the user's request, a tool row and the assistant's answer."""
    ok(persona.call("POST", f"{SLOTS}/{slot}/turns", {"content": f"Please plan the {words}."}), 201)
    for role, text in (("tool", f"looked up {words}"), ("assistant", f"Planned the {words}.")):
        ok(persona.call("POST", f"{SLOTS}/{slot}/rows", {"role": role, "content": text}), 201)


def rows(persona: Persona, slot: str) -> list[dict[str, Any]]:
    body = ok(persona.call("GET", f"{SLOTS}/{slot}/transcript?limit=1000"))
    assert body["next"] is None
    return list(body["rows"])


@pytest.fixture
def apps(
    owner: Persona, foreign: Persona, configure: Callable[..., Path]
) -> tuple[Persona, Persona]:
    """(A, B): two apps; summaries on, one user turn enough."""
    configure(enabled=True, min_user_turns=1)
    return foreign, owner


def fork_then_delete_parent(b: Persona, parent: str, child: str) -> list[dict[str, Any]]:
    """B creates ``parent`` with three rows, forks it to ``child``, deletes ``parent``."""
    create(b, parent)
    seed_rows(b, parent, "vegetable garden layout")
    seeded = rows(b, parent)
    assert len(seeded) == 3
    ok(b.call("POST", f"{SLOTS}/{parent}/fork", {"name": child}), 201)
    ok(b.call("DELETE", f"{SLOTS}/{parent}"), 204)
    return seeded


@pytest.mark.parametrize(("b_parent", "a_parent"), [("fr-parent", "fr-parent"), ("al:p", "al_p")])
def test_a_fork_never_reads_whoever_now_owns_its_parents_name(
    apps: tuple[Persona, Persona], store: TranscriptStore, b_parent: str, a_parent: str
) -> None:
    a, b = apps
    seeded = fork_then_delete_parent(b, b_parent, "fr-child")
    # Deleting the parent does not take the fork's seed rows with it.
    assert rows(b, "fr-child") == seeded
    create(a, a_parent)  # the same name, or another name with the same file stem
    assert store.path(f"dashboard:{a_parent}") == store.path(f"dashboard:{b_parent}")
    ok(a.call("POST", f"{SLOTS}/{a_parent}/turns", {"content": SECRET}), 201)
    ok(a.call("POST", f"{SLOTS}/{a_parent}/rows", {"role": "assistant", "content": "Noted."}), 201)
    child_rows = rows(b, "fr-child")
    assert child_rows == seeded
    assert "hunter2" not in json.dumps(child_rows)
    summary = ok(b.call("POST", f"{SLOTS}/fr-child/summary"))
    assert summary["intents"], summary
    assert "hunter2" not in json.dumps(summary)
    assert "garden" in json.dumps(summary["intents"]).lower()
    slot = ok(b.call("GET", f"{SLOTS}/fr-child"))
    assert (slot["user_turns"], "hunter2" in json.dumps(slot)) == (1, False)


def test_the_fork_keeps_its_seed_when_the_parent_is_deleted(
    apps: tuple[Persona, Persona], store: TranscriptStore
) -> None:
    _, b = apps
    create(b, "keep-parent")
    seed_rows(b, "keep-parent", "herb spiral")
    ok(b.call("POST", f"{SLOTS}/keep-parent/fork", {"name": "keep-child"}), 201)
    ok(
        b.call("POST", f"{SLOTS}/keep-child/rows", {"role": "assistant", "content": "Own row."}),
        201,
    )
    before = rows(b, "keep-child")
    assert [r["content"] for r in before][-1] == "Own row."
    assert len(before) == 4
    ok(b.call("DELETE", f"{SLOTS}/keep-parent"), 204)
    assert not store.exists("dashboard:keep-parent")
    assert rows(b, "keep-child") == before
    assert ok(b.call("GET", f"{SLOTS}/keep-child"))["user_turns"] == 1


def test_a_forged_forked_from_in_an_imported_file_reaches_nothing(
    apps: tuple[Persona, Persona], store: TranscriptStore, tmp_path: Path
) -> None:
    """A imports a file claiming to be a fork of B's session: it reads as its own rows only."""
    a, b = apps
    create(b, "victim")
    ok(b.call("POST", f"{SLOTS}/victim/turns", {"content": SECRET}), 201)
    source = tmp_path / "incoming"
    source.mkdir()
    head = {
        "_type": "metadata",
        "created_at": "2026-01-01T00:00:00+00:00",
        "title": "forged",
        "forked_from": "dashboard:victim",
        "fork_seed_len": 5,
        "app": b.app.name if b.app else "",
    }
    own = {"role": "user", "content": "Please tidy the shed.", "ts": "2026-01-01T00:00:01+00:00"}
    (source / "dashboard_forged.jsonl").write_bytes(
        orjson.dumps(head) + b"\n" + orjson.dumps(own) + b"\n"
    )
    result = session_import_paths(paths=[source], app=a.app)
    assert [o.status for o in result.outcomes] == ["imported"], result.outcomes
    assert Slot.objects.get(name="forged").app == a.app
    imported = rows(a, "forged")
    assert [r["content"] for r in imported] == ["Please tidy the shed."]
    assert store.read_session("dashboard:forged").rows == imported
    summary = ok(a.call("POST", f"{SLOTS}/forged/summary"))
    assert "hunter2" not in json.dumps(summary)
    assert ok(a.call("GET", f"{SLOTS}/forged"))["user_turns"] == 1


def test_a_fork_that_cannot_be_written_is_a_clean_507_and_leaves_nothing(
    apps: tuple[Persona, Persona], store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, b = apps
    create(b, "full-parent")
    seed_rows(b, "full-parent", "compost bins")

    def disk_full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("transcripts.core.fsutil.write_all", disk_full)
    response = b.call("POST", f"{SLOTS}/full-parent/fork", {"name": "full-child"})
    assert response.status_code == 507, response.content
    assert error_of(response)["code"] == "storage_full"
    assert not store.exists("dashboard:full-child")
    assert not Slot.objects.filter(name="full-child").exists()
    assert not [p.name for p in store.root.iterdir() if ".tmp-" in p.name]
