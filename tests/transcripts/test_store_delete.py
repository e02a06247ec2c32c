"""Delete: the transcript, its archives, its registered derived files and its lock file go."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.transcripts.helpers import (
    KEY,
    contents,
    file_ts,
    fill_session,
    ticking_store,
)
from transcripts.core import rewrite
from transcripts.core.keys import safe_key
from transcripts.core.rewrite import register_derived

# ---------------------------------------------------------------- delete


def _derived(root: Path, key: str) -> list[Path]:
    """A derived-files owner's layout (as summaries registers its sidecars)."""
    return [root / folder / f"{safe_key(key)}.json" for folder in (".one", ".two")]


def test_delete_removes_transcript_derived_files_archives_and_the_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rewrite, "_OWNERS", {})
    register_derived("test-owner", _derived)
    store = ticking_store(tmp_path, max_bytes=500, keep_lines=2)
    others = ["dashboard:s10", "dashboard:s1_", "dashboard:s1-x", "s1"]
    for key in [KEY, *others]:
        for i in range(12):
            store.append_row(key, "user", f"{key} {i} " + "z" * 40)
        for path in _derived(tmp_path, key):
            path.parent.mkdir(exist_ok=True)
            path.write_text("{}")
    stamps = file_ts(store.path(KEY))
    store.rewind(KEY, stamps[0])
    own_archives = store.archive_paths(KEY)
    assert len(own_archives) >= 2
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert store.delete(KEY) is True
    gone = before - {p for p in tmp_path.rglob("*") if p.is_file()}
    assert gone == {
        store.path(KEY),
        store.lock_path(KEY),
        *_derived(tmp_path, KEY),
        *own_archives,
    }
    assert all(store.lock_path(key).exists() for key in others)  # only its own
    for key in others:
        assert len(store.read_session(key).rows) == 12
    assert store.delete(KEY) is False


def test_without_a_registered_owner_delete_leaves_other_files_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The core store knows no derived layout: only what an owner registers is reaped.
    monkeypatch.setattr(rewrite, "_OWNERS", {})
    store = ticking_store(tmp_path)
    store.append_row(KEY, "user", "hello")
    unowned = [*_derived(tmp_path, KEY), tmp_path / ".intents" / f"{safe_key(KEY)}.json"]
    for path in unowned:
        path.parent.mkdir(exist_ok=True)
        path.write_text("{}")
    assert store.delete(KEY) is True
    assert not store.path(KEY).exists()
    assert all(path.exists() for path in unowned)


def test_append_after_delete_starts_a_fresh_session(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 3, title="old")
    store.delete(KEY)
    store.append_row(KEY, "user", "fresh", metadata={"title": "new"})
    view = store.read_session(KEY)
    assert contents(view.rows) == ["fresh"]
    assert view.metadata is not None
    assert view.metadata["title"] == "new"
