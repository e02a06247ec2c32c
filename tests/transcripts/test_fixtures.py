"""Real transcripts of the original system read, append, edit and rotate unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.transcripts.helpers import (
    FIXTURE_ARCHIVE,
    FIXTURE_TRANSCRIPTS,
    archive_files,
    assert_strictly_increasing,
    copy_fixtures,
    json_lines,
    kinds,
    line_zero,
    make_store,
    raw_lines,
    ticking_store,
)
from transcripts.core.fold import fold_bytes
from transcripts.core.keys import key_from_stem, safe_key
from transcripts.core.store import TranscriptStore

RESEARCH = "dashboard:research-notes"


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    root = copy_fixtures(tmp_path / "sessions")
    return ticking_store(root)


@pytest.mark.parametrize("path", FIXTURE_TRANSCRIPTS, ids=lambda p: p.stem)
def test_fold_identity_on_every_fixture(path: Path) -> None:
    """No revisions: the fold is exactly the stdlib parse of every row line."""
    data = path.read_bytes()
    lines = [json.loads(part) for part in data.split(b"\n") if part.strip()]
    folded = fold_bytes(data, file=path.name)
    assert folded.metadata == lines[0]
    assert folded.rows == lines[1:]
    assert kinds(folded) == []
    assert folded.report.revisions == 0
    assert_strictly_increasing(r["ts"] for r in folded.rows)


def test_fold_identity_on_the_fixture_archive() -> None:
    lines = json_lines(FIXTURE_ARCHIVE)
    folded = fold_bytes(FIXTURE_ARCHIVE.read_bytes())
    assert folded.header == lines[0]
    assert folded.metadata is None
    assert folded.rows == lines[1:]
    assert kinds(folded) == []


@pytest.mark.parametrize("path", FIXTURE_TRANSCRIPTS, ids=lambda p: p.stem)
def test_every_fixture_reads_as_a_session_under_its_key(store: TranscriptStore, path: Path) -> None:
    key = key_from_stem(path.stem)
    assert safe_key(key) == path.stem
    assert store.path(key).name == path.name
    view = store.read_session(key)
    own = json_lines(path)
    assert view.metadata == own[0]
    assert view.rows[-len(own) + 1 :] == own[1:]
    identity = store.identity(key)
    assert identity is not None
    assert identity.gen == 0  # no rotation_generation in line 0 ⇒ 0


def test_the_legacy_bare_stem_archive_is_chained_for_research_notes(
    store: TranscriptStore,
) -> None:
    view = store.read_session(RESEARCH)
    archived = json_lines(FIXTURE_ARCHIVE)[1:]
    current = json_lines(store.path(RESEARCH))[1:]
    assert view.rows == archived + current
    assert len(view.rows) == 3 + 12
    assert view.files == [f"archive/{FIXTURE_ARCHIVE.name}", store.path(RESEARCH).name]
    assert_strictly_increasing(r["ts"] for r in view.rows)
    assert kinds(view.report) == []


def test_the_bare_stem_archive_belongs_to_a_bare_transcript_when_one_exists(
    store: TranscriptStore,
) -> None:
    (store.root / "research-notes.jsonl").write_bytes(b'{"_type":"metadata"}\n')
    assert store.read_session(RESEARCH).rows == json_lines(store.path(RESEARCH))[1:]
    assert len(store.read_session("research-notes").rows) == 3


def test_other_fixture_sessions_do_not_chain_the_research_archive(store: TranscriptStore) -> None:
    for key in ("dashboard:starter", "dashboard:coder-demo", "dashboard:triage-demo"):
        assert store.archive_paths(key) == []


def test_appending_to_a_fixture_keeps_its_bytes_and_metadata(store: TranscriptStore) -> None:
    key = "dashboard:coder-demo"
    before = store.path(key).read_bytes()
    meta = line_zero(store.path(key))
    result = store.append_row(key, "user", "one more question")
    assert store.path(key).read_bytes().startswith(before)
    assert line_zero(store.path(key)) == meta
    assert_strictly_increasing(r["ts"] for r in store.read_session(key).rows)
    assert store.read_session(key).rows[-1]["ts"] == result.ts[0]


def test_a_revision_of_a_fixture_row_folds(store: TranscriptStore) -> None:
    key = "dashboard:starter"
    target = json_lines(store.path(key))[2]
    store.append_revision(key, target["ts"], {"cls": "stopped"})
    assert store.read_session(key).rows[1] == {**target, "cls": "stopped"}


def test_set_title_on_a_fixture_keeps_every_other_key_and_every_row(
    store: TranscriptStore,
) -> None:
    key = "dashboard:triage-demo"
    before = raw_lines(store.path(key))
    sig = store.sig(key)
    store.update_metadata(key, {"title": "Renamed"})
    after = raw_lines(store.path(key))
    assert after[1:] == before[1:]
    assert json.loads(after[0]) == {**json.loads(before[0]), "title": "Renamed"}
    assert store.sig(key) == sig


def test_rotating_a_fixture_keeps_the_whole_session(store: TranscriptStore) -> None:
    before = store.read_session(RESEARCH).rows
    small = make_store(store.root, max_bytes=2500, keep_lines=4)
    dropped = small.rotate(RESEARCH)
    assert dropped == 8
    assert small.read_session(RESEARCH).rows == before
    new_archives = [p for p in archive_files(small) if p.name.startswith("dashboard_")]
    assert len(new_archives) == 1
    assert small.read_session(RESEARCH).files[0] == f"archive/{FIXTURE_ARCHIVE.name}"


def test_deleting_a_fixture_session_removes_its_legacy_archive_only(
    store: TranscriptStore,
) -> None:
    assert store.delete(RESEARCH) is True
    assert not (store.archive_dir / FIXTURE_ARCHIVE.name).exists()
    assert sorted(p.name for p in store.keys_on_disk()) == [
        "dashboard_coder-demo.jsonl",
        "dashboard_starter.jsonl",
        "dashboard_triage-demo.jsonl",
    ]
