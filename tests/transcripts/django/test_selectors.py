"""Reads: listing and ownership, and the paginated folded transcript."""

from __future__ import annotations

import pytest

from transcripts.core.errors import SessionNotFound
from transcripts.selectors import (
    InvalidCursor,
    session_get_for_caller,
    session_list,
    session_transcript,
)
from transcripts.services import session_append_row, session_create, session_import_paths

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(store, alice, bob):
    session_create(name="a1", title="Alpha plan", app=alice)
    session_create(name="b1", title="Beta", app=bob)
    session_create(name="free", title="Unscoped", app=None)
    session_append_row(key="dashboard:b1", role="user", content="first")
    session_append_row(key="dashboard:a1", role="user", content="newest")


def test_list_is_scoped_and_newest_first(three, alice, bob):
    assert [s.key for s in session_list(app="")] == [
        "dashboard:a1",
        "dashboard:b1",
        "dashboard:free",  # no activity yet: last
    ]
    assert [s.key for s in session_list(app=alice)] == ["dashboard:a1"]
    assert [s.key for s in session_list(app=bob)] == ["dashboard:b1"]
    assert [s.key for s in session_list(app=None)] == ["dashboard:free"]
    assert [s.key for s in session_list(app="", search="alpha")] == ["dashboard:a1"]
    assert [s.key for s in session_list(app=bob, search="alpha")] == []
    assert [s.key for s in session_list(app="", search="dashboard:fr")] == ["dashboard:free"]


def test_session_list_requires_a_stated_owner(three):
    with pytest.raises(TypeError):
        session_list()  # type: ignore[call-arg]


def test_get_for_caller(three, alice, bob):
    own = session_get_for_caller(name="a1", caller_app=alice)
    assert own is not None
    assert own.session.key == "dashboard:a1"
    assert session_get_for_caller(name="a1", caller_app=bob) is None  # foreign looks missing
    assert session_get_for_caller(name="free", caller_app=alice) is None  # unscoped: no app
    assert session_get_for_caller(name="free", caller_app="") is not None
    assert session_get_for_caller(name="b1", caller_app="") is not None
    assert session_get_for_caller(name="nope", caller_app="") is None
    assert session_get_for_caller(name="../etc", caller_app="") is None


def test_transcript_pages(store):
    session_create(name="s1", app=None)
    for i in range(5):
        session_append_row(key="dashboard:s1", role="user", content=f"m{i}")
    rows, report, cursor = session_transcript(key="dashboard:s1", limit=2)
    seen = [r["content"] for r in rows]
    while cursor:
        rows, report, cursor = session_transcript(key="dashboard:s1", after=cursor, limit=2)
        seen += [r["content"] for r in rows]
    assert seen == [f"m{i}" for i in range(5)]
    assert report.counts() == {}
    with pytest.raises(InvalidCursor):
        session_transcript(key="dashboard:s1", after="2001-01-01T00:00:00+00:00")
    with pytest.raises(SessionNotFound):
        session_transcript(key="dashboard:nope")


def test_transcript_pages_across_duplicate_ts(store, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    ts = "2025-01-01T00:00:00+00:00"
    lines = ['{"_type": "metadata"}'] + [
        f'{{"role": "user", "content": "d{i}", "ts": "{ts}"}}' for i in range(4)
    ]
    (src / "dashboard_dups.jsonl").write_text("\n".join(lines) + "\n")
    session_import_paths(paths=[src])
    seen, cursor = [], None
    while True:
        rows, report, cursor = session_transcript(key="dashboard:dups", after=cursor, limit=1)
        seen += [r["content"] for r in rows]
        if cursor is None:
            break
    assert seen == ["d0", "d1", "d2", "d3"]
    assert report.counts() == {"dup_ts": 3}


def test_whole_session_includes_archives(store, fixture_tree):
    session_import_paths(paths=[fixture_tree])
    rows, _report, cursor = session_transcript(key="dashboard:research-notes", limit=3)
    assert rows[0]["ts"] == "2025-11-02T15:45:00+00:00"  # the archived rows come first
    assert cursor == rows[-1]["ts"]
