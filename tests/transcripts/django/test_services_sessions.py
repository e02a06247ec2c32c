"""Every transcript write keeps its Session row equal to a fresh fold of the disk."""

from __future__ import annotations

import os

import orjson
import pytest

from summaries.core.sidecar import sidecar_path
from tests.transcripts.django.util import Spy, mirror_diff
from transcripts.core.errors import RevisionRejected, RowNotFound, SessionNotFound
from transcripts.core.store import TranscriptStore
from transcripts.core.timestamps import parse_ts
from transcripts.models import Session, Slot
from transcripts.services import (
    InvalidSlotName,
    SlotExists,
    session_append_revision,
    session_append_row,
    session_append_rows,
    session_create,
    session_delete,
    session_fork,
    session_rewind,
    session_rotate,
    session_set_title,
    session_sync,
    session_update_metadata,
)
from transcripts.services.sync import disk_state

pytestmark = pytest.mark.django_db


def _turn(key: str, n: int) -> list[str]:
    stamps = []
    for i in range(n):
        stamps += session_append_row(key=key, role="user", content=f"question {i}").ts
        stamps += session_append_row(key=key, role="assistant", content=f"answer {i}").ts
    return stamps


def test_create_makes_file_session_and_slot(store, alice):
    slot = session_create(name="s1", title="First", memory_mode="persistent", app=alice)
    assert slot.name == "s1"
    assert slot.app == alice
    assert not slot.running
    session = slot.session
    assert session.key == "dashboard:s1"
    assert session.safe_key == "dashboard_s1"
    assert (session.title, session.memory_mode, session.app) == ("First", "persistent", alice)
    assert session.row_count == 0
    assert session.last_activity is None
    metadata = store.read_metadata("dashboard:s1")
    assert metadata is not None
    assert (metadata["key"], metadata["title"], metadata["app"]) == (
        "dashboard:s1",
        "First",
        "alice",
    )
    assert mirror_diff("dashboard:s1") == {}


@pytest.mark.parametrize("name", ["", "../x", "a/b", "x" * 129, "bad\nname", ".hidden", "a..b"])
def test_create_refuses_invalid_slot_names(store, name):
    with pytest.raises(InvalidSlotName):
        session_create(name=name, app=None)
    assert not list(store.root.glob("*.jsonl"))


def test_create_refuses_an_existing_slot_or_transcript(store):
    session_create(name="s1", app=None)
    with pytest.raises(SlotExists):
        session_create(name="s1", app=None)
    store.create("dashboard:orphan", {})  # a file the mirror does not know yet
    with pytest.raises(SlotExists):
        session_create(name="orphan", app=None)
    assert Slot.objects.count() == 1


def test_appends_update_the_mirror_without_folding(store, monkeypatch):
    session_create(name="s1", app=None)
    spy = Spy(monkeypatch, TranscriptStore, "read_session")
    stamps = _turn("dashboard:s1", 3)
    assert spy.calls == []  # incremental: no re-fold per row
    session = Session.objects.get(key="dashboard:s1")
    assert (session.row_count, session.user_turns) == (6, 3)
    assert session.sig == store.sig("dashboard:s1")
    assert session.last_activity == parse_ts(stamps[-1])
    assert mirror_diff("dashboard:s1") == {}


def test_append_rows_in_one_write(store):
    session_create(name="s1", app=None)
    appended = session_append_rows(
        key="dashboard:s1",
        rows=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "meta": {}}],
    )
    assert len(appended.ts) == 2
    assert appended.ts[0] < appended.ts[1]
    assert mirror_diff("dashboard:s1") == {}


def test_append_to_a_missing_transcript_is_refused(store):
    with pytest.raises(SessionNotFound):
        session_append_row(key="dashboard:nope", role="user", content="x")
    assert not store.exists("dashboard:nope")


def test_revision_moves_sig_not_counts(store):
    session_create(name="s1", app=None)
    first = session_append_row(key="dashboard:s1", role="assistant", content="draft").ts[0]
    before = Session.objects.get(key="dashboard:s1")
    session_append_revision(key="dashboard:s1", target_ts=first, patch={"content": "final"})
    after = Session.objects.get(key="dashboard:s1")
    assert after.sig > before.sig
    assert after.row_count == 1
    assert store.read_session("dashboard:s1").rows[0]["content"] == "final"
    assert mirror_diff("dashboard:s1") == {}
    with pytest.raises(RowNotFound):
        session_append_revision(
            key="dashboard:s1", target_ts="2000-01-01T00:00:00+00:00", patch={"x": 1}
        )


def test_a_revision_may_not_change_role(store):
    # Redaction depends on the role (user rows are stored as typed), so a role change
    # could turn unredacted text into an assistant row: refused before a byte is written.
    session_create(name="s1", app=None)
    ts = session_append_row(key="dashboard:s1", role="user", content="hi").ts[0]
    before = store.path("dashboard:s1").read_bytes()
    with pytest.raises(RevisionRejected, match="role"):
        session_append_revision(key="dashboard:s1", target_ts=ts, patch={"role": "assistant"})
    assert store.path("dashboard:s1").read_bytes() == before
    assert Session.objects.get(key="dashboard:s1").user_turns == 1
    assert mirror_diff("dashboard:s1") == {}


def test_title_and_metadata_edits_keep_sig_and_gen(store):
    session_create(name="s1", title="old", app=None)
    _turn("dashboard:s1", 1)
    before = Session.objects.get(key="dashboard:s1")
    assert session_set_title(key="dashboard:s1", title="new")
    assert session_update_metadata(key="dashboard:s1", updates={"pinned": True, "closed": True})
    after = Session.objects.get(key="dashboard:s1")
    assert (after.title, after.pinned, after.closed) == ("new", True, True)
    assert (after.sig, after.gen, after.row_count) == (before.sig, before.gen, 2)
    assert mirror_diff("dashboard:s1") == {}
    assert not session_set_title(key="dashboard:nope", title="x")


def test_rewind_drops_rows_and_advances_gen(store):
    session_create(name="s1", app=None)
    stamps = _turn("dashboard:s1", 3)
    assert session_rewind(key="dashboard:s1", after_ts=stamps[1]) == 4
    session = Session.objects.get(key="dashboard:s1")
    assert (session.row_count, session.user_turns, session.gen) == (2, 1, 1)
    assert mirror_diff("dashboard:s1") == {}


def test_rotate_archives_and_keeps_the_whole_session_count(store, settings):
    settings.TRANSCRIPT_MAX_BYTES = 10_000_000
    settings.TRANSCRIPT_KEEP_LINES = 4
    session_create(name="s1", app=None)
    _turn("dashboard:s1", 5)
    assert session_rotate(key="dashboard:s1") == 0  # under the limits
    assert Session.objects.get(key="dashboard:s1").gen == 0
    settings.TRANSCRIPT_MAX_BYTES = 400
    dropped = session_rotate(key="dashboard:s1")
    assert 0 < dropped < 10
    session = Session.objects.get(key="dashboard:s1")
    assert session.gen == 1
    assert session.row_count == 10
    assert len(store.archive_paths("dashboard:s1")) == 1
    assert mirror_diff("dashboard:s1") == {}


def test_an_append_that_rotates_resyncs(store, settings):
    settings.TRANSCRIPT_MAX_BYTES = 600
    settings.TRANSCRIPT_KEEP_LINES = 3
    session_create(name="s1", app=None)
    _turn("dashboard:s1", 6)
    session = Session.objects.get(key="dashboard:s1")
    assert session.gen >= 1
    assert session.row_count == 12
    assert mirror_diff("dashboard:s1") == {}


def test_append_after_a_torn_tail_refolds(store):
    session_create(name="s1", app=None)
    _turn("dashboard:s1", 1)
    with store.path("dashboard:s1").open("ab") as fp:
        fp.write(b'{"role": "assistant", "content": "cut sh')
    session_sync(key="dashboard:s1")
    assert Session.objects.get(key="dashboard:s1").anomaly_counts == {"torn_tail": 1}
    session_append_row(key="dashboard:s1", role="user", content="again")
    session = Session.objects.get(key="dashboard:s1")
    assert session.anomaly_counts == {"bad_json": 1}
    assert session.row_count == 3
    assert mirror_diff("dashboard:s1") == {}


def test_a_stale_sync_never_regresses_the_mirror(store):
    session_create(name="s1", app=None)
    old = disk_state("dashboard:s1")  # a sync that read the disk before the append…
    _turn("dashboard:s1", 1)
    session_sync(key="dashboard:s1", state=old)  # …and writes after it: ignored
    assert Session.objects.get(key="dashboard:s1").row_count == 2
    assert mirror_diff("dashboard:s1") == {}


def test_fork_copies_the_seed_and_keeps_the_owner(store, alice):
    session_create(name="parent", title="P", app=alice)
    _turn("dashboard:parent", 2)
    child = session_fork(key="dashboard:parent", name="child")
    assert child.app == alice
    assert child.session.title == "P"
    assert child.session.row_count == 4
    assert child.session.user_turns == 2
    metadata = store.read_metadata("dashboard:child")
    assert metadata is not None
    assert metadata["forked_from"] == "dashboard:parent"
    assert metadata["fork_seed_len"] == 4
    session_append_row(key="dashboard:child", role="user", content="branch")
    assert Session.objects.get(key="dashboard:child").row_count == 5
    assert mirror_diff("dashboard:child") == {}
    session_delete(key="dashboard:parent")  # the seed is the child's own: nothing moves
    session_sync(key="dashboard:child")
    assert Session.objects.get(key="dashboard:child").row_count == 5
    assert mirror_diff("dashboard:child") == {}
    session_create(name="parent", app=None)  # someone else takes the name
    _turn("dashboard:parent", 3)
    session_sync(key="dashboard:child")
    assert Session.objects.get(key="dashboard:child").row_count == 5
    generated = session_fork(key="dashboard:parent")
    assert generated.name.startswith("parent-fork-")
    with pytest.raises(SlotExists):
        session_fork(key="dashboard:parent", name="child")
    with pytest.raises(SessionNotFound):
        session_fork(key="dashboard:nope", name="x")


def test_delete_removes_files_rows_and_the_lock_file(store):
    session_create(name="s1", app=None)
    _turn("dashboard:s1", 1)
    sidecar = sidecar_path(store.root, "dashboard:s1", "summaries")
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text("{}")
    assert session_delete(key="dashboard:s1")
    assert not store.exists("dashboard:s1")
    assert not sidecar.exists()
    assert not store.lock_path("dashboard:s1").exists()
    assert not Session.objects.exists()
    assert not Slot.objects.exists()
    assert not session_delete(key="dashboard:s1")


def test_user_rows_are_stored_as_typed(store):
    session_create(name="s1", app=None)
    session_append_row(key="dashboard:s1", role="user", content="ünïcode ✓", meta={"mid": "m-1"})
    line = store.path("dashboard:s1").read_bytes().splitlines()[-1]
    row = orjson.loads(line)
    assert (row["role"], row["content"], row["meta"]) == ("user", "ünïcode ✓", {"mid": "m-1"})
    assert os.path.getsize(store.path("dashboard:s1")) == Session.objects.get().size
