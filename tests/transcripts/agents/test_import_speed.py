"""The first import's write path: one append per new session, a mirror built from the
rows written (no re-read of the file), and a full fold whenever that shortcut is unsafe."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.transcripts.agents.helpers import (
    CLAUDE_AGENT,
    CLAUDE_FILE,
    CLAUDE_SID,
    CODEX_ID,
    copy_tree,
)
from transcripts.core import fsutil
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot
from transcripts.runtime import get_store
from transcripts.services import agent_import
from transcripts.services.sync import disk_state

pytestmark = pytest.mark.django_db

KEYS = (f"claude:{CLAUDE_SID}", f"claude:{CLAUDE_SID}:agent-a1b2c3", f"codex:{CODEX_ID}")


def run(*args: str) -> None:
    call_command("import_transcripts", *args, stdout=StringIO(), stderr=StringIO())


@pytest.fixture
def src(tmp_path: Path, store: TranscriptStore) -> Path:
    return copy_tree(tmp_path / "src")


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counter[str]]:
    """Counts, per key, the store's file writes (an append, or a new session's file
    created whole) and whole-session reads."""
    calls: dict[str, Counter[str]] = {"writes": Counter(), "folds": Counter()}
    append, read = TranscriptStore._append_locked, TranscriptStore.read_session
    create = fsutil.atomic_write

    def counted_create(path: Path, *args: Any, **kwargs: Any) -> Any:
        keys = [key for key in KEYS if get_store().path(key) == path]
        calls["writes"].update(keys or [str(path)])
        return create(path, *args, **kwargs)

    def counted_append(self: TranscriptStore, key: str, *args: Any) -> Any:
        calls["writes"][key] += 1
        return append(self, key, *args)

    def counted_read(self: TranscriptStore, key: str) -> Any:
        calls["folds"][key] += 1
        return read(self, key)

    monkeypatch.setattr(TranscriptStore, "_append_locked", counted_append)
    monkeypatch.setattr(TranscriptStore, "read_session", counted_read)
    monkeypatch.setattr(agent_import, "atomic_write", counted_create)
    return calls


def assert_mirrors_disk(key: str) -> None:
    """The Session row holds exactly what a full fold of the file says."""
    state = disk_state(key)
    session = Session.objects.get(key=key)
    expected = state.fields()
    assert {name: getattr(session, name) for name in expected} == expected
    assert session.created_at == state.created_at
    assert Slot.objects.filter(session=session).count() == 1


def test_a_new_session_is_one_append_and_never_read_back(
    src: Path, spy: dict[str, Counter[str]]
) -> None:
    run("--format", "claude-code", str(src / "claude"))
    run("--format", "codex", str(src / "codex"))
    assert dict(spy["writes"]) == dict.fromkeys(KEYS, 1)  # line 0 and every row: one write
    assert not spy["folds"]  # the mirror came from the rows written, not a re-fold
    for key in KEYS:
        assert_mirrors_disk(key)
    claude = Session.objects.get(key=KEYS[0])
    assert (claude.row_count, claude.user_turns) == (len(get_store().read_session(KEYS[0]).rows), 3)
    assert claude.last_activity is not None


def test_a_later_run_appends_once_and_keeps_the_mirror_equal_to_disk(
    src: Path, spy: dict[str, Counter[str]]
) -> None:
    run("--format", "claude-code", str(src / "claude"))
    path = src / CLAUDE_FILE
    record = json.loads(path.read_text().splitlines()[3])
    for n in range(3):
        record.update(uuid=f"u9{n}", message={"role": "user", "content": f"more {n}"})
        with path.open("a") as fp:
            fp.write(json.dumps(record) + "\n")
    spy["writes"].clear()
    run("--format", "claude-code", str(src / "claude"))
    assert dict(spy["writes"]) == {KEYS[0]: 1}
    assert_mirrors_disk(KEYS[0])
    assert Session.objects.get(key=KEYS[0]).user_turns == 6


def test_a_first_write_that_rotates_still_mirrors_the_whole_session(
    src: Path, settings: Any
) -> None:
    # A limit below the session's size: the one append rotates, rows move to an archive
    # and the generation moves on; the importer then folds (rotation folds anyway).
    settings.TRANSCRIPT_MAX_BYTES = 4000
    settings.TRANSCRIPT_KEEP_LINES = 3
    run("--format", "claude-code", str(src / CLAUDE_FILE))
    key = KEYS[0]
    assert disk_state(key).gen >= 1
    assert_mirrors_disk(key)


def test_a_file_written_to_after_its_creation_is_folded_not_guessed(
    src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer between the new session's write and its index: the file is no
    longer what was written, so the mirror is folded from it."""
    real = fsutil.atomic_write

    def with_interloper(path: Path, *args: Any, **kwargs: Any) -> Any:
        real(path, *args, **kwargs)
        get_store().append_row(KEYS[1], "assistant", "written by someone else")

    monkeypatch.setattr(agent_import, "atomic_write", with_interloper)
    run("--format", "claude-code", str(src / CLAUDE_AGENT))
    key = KEYS[1]
    assert_mirrors_disk(key)
    rows = get_store().read_session(key).rows
    assert rows[-1]["content"] == "written by someone else"
    assert Session.objects.get(key=key).row_count == len(rows)
