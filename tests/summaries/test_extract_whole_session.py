"""The summary pass's whole-session read: ``TranscriptStore.read_session`` + ``extract_turns``.

The turns come from the session's own chain (landed rotate archives oldest first, then
the file), from exactly the rows the store's fold keeps, revisions applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from summaries.core.extract import extract_turns
from summaries.core.transcript_turn import TranscriptTurn
from tests.transcripts.helpers import make_store
from transcripts.core.archive import write_archive
from transcripts.core.store import TranscriptStore

KEY = "dashboard_whole"


def fold_path(store: TranscriptStore, key: str = KEY) -> list[TranscriptTurn]:
    return extract_turns(store.read_session(key).rows)


def exchange(store: TranscriptStore, i: int, key: str = KEY) -> None:
    store.append_rows(
        key,
        [
            {"role": "user", "content": f"Please fix bug {i} in the export view."},
            {
                "role": "assistant",
                "content": f"Fixed bug {i}; the export test passes. " + "detail " * 40,
                "meta": {"tool_calls": [{"name": "shell", "output": "x" * 300}], "i": i},
            },
        ],
        metadata={"title": "whole read"} if i == 0 else None,
    )


@pytest.fixture
def rotated(tmp_path: Path) -> TranscriptStore:
    """A session whose early rows live in several rotate archives, no revision anywhere."""
    store = make_store(tmp_path / "sessions", max_bytes=4_000, keep_lines=4)
    for i in range(12):
        exchange(store, i)
    assert len(store.archive_paths(KEY)) >= 3
    return store


def test_archived_turns_come_first_in_order_numbered_as_one_session(rotated):
    turns = fold_path(rotated)
    # Every exchange is there, archived ones first, in order.
    users = [t.text for t in turns if t.role == "user"]
    assert users == [f"Please fix bug {i} in the export view." for i in range(12)]
    assert [t.user_turn for t in turns if t.role == "user"] == list(range(1, 13))


def test_archives_the_session_does_not_own_are_left_out(rotated):
    # A rewind's archive (rows dropped from the session) and an unlanded rotate archive
    # (its rotation never replaced the file: the rows are still in the file).
    rotated.append_rows(
        KEY, [{"role": "user", "content": "one more"}, {"role": "assistant", "content": "ok"}]
    )
    keep = rotated.read_file(KEY).rows[-3]["ts"]
    assert rotated.rewind(KEY, keep) == 2
    assert any(b'"reason":"rewind"' in p.read_bytes() for p in rotated.archive_paths(KEY))
    gen = rotated.identity(KEY).gen
    ghost = orjson.dumps({"role": "user", "content": "ghost", "ts": "2099-01-01T00:00:00+00:00"})
    write_archive(
        rotated.archive_dir,
        KEY,
        [ghost],
        "rotate",
        now=rotated.clock(),
        fsync=False,
        generation=gen + 1,
    )
    texts = [t.text for t in fold_path(rotated)]
    assert "one more" not in texts
    assert "ghost" not in texts


def test_odd_lines_are_kept_or_skipped_as_the_fold_does(tmp_path):
    store = make_store(tmp_path / "sessions")
    exchange(store, 0)
    path = store.path(KEY)
    ts = "2026-03-01T12:00:00.000001+00:00"
    with path.open("ab") as fp:
        fp.write(b"\n")  # blank
        fp.write(b"{not json\n")
        fp.write(b"[1, 2]\n")  # not an object
        fp.write(b'{"_type": "metadata", "title": "stray"}\n')  # a stray record
        fp.write(b'{"role": "user", "content": "lone \\ud800 surrogate", "ts": "' + b"x" + b'"}\n')
        fp.write(b'{"role": "user", "content": "numeric ts", "ts": 12}\n')
        # Text about revision records is content, not a revision record.
        fp.write(
            orjson.dumps(
                {"role": "user", "content": 'grep \'"_type":"revision"\' x.jsonl', "ts": ts}
            )
            + b"\n"
        )
        fp.write(b'{"role": "assistant", "content": "torn but whole", "ts": "' + b"y" + b'"}')
    texts = [t.text for t in fold_path(store)]
    assert "numeric ts" in texts
    assert "torn but whole" in texts
    assert any("revision" in t for t in texts)


def test_a_leading_bom_is_dropped_like_the_fold_drops_it(tmp_path):
    store = make_store(tmp_path / "sessions")
    path = store.path(KEY)
    path.parent.mkdir(parents=True)
    row = {"role": "user", "content": "first row, no metadata", "ts": "2026-03-01T12:00:00+00:00"}
    path.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(row) + b"\n")
    assert [t.text for t in fold_path(store)] == ["first row, no metadata"]


def test_a_revision_in_the_file_is_applied(rotated):
    target = rotated.read_file(KEY).rows[-1]["ts"]
    rotated.append_revision(KEY, target, {"content": "patched by a revision"})
    assert fold_path(rotated)[-1].text == "patched by a revision"


def test_a_fork_reads_its_own_seed_never_a_later_owner_of_the_parents_name(rotated):
    rotated.fork(KEY, "dashboard_child")
    exchange(rotated, 99, key="dashboard_child")
    seeded = fold_path(rotated, "dashboard_child")
    assert [t.text for t in seeded if t.role == "user"][
        -1
    ] == "Please fix bug 99 in the export view."
    rotated.delete(KEY)
    exchange(rotated, 500, key=KEY)  # someone else's session under the parent's name
    assert fold_path(rotated, "dashboard_child") == seeded


# --- the pass ----------------------------------------------------------------------------------


@pytest.fixture
def pass_env(
    offline_home: Path, summaries_on_via_env: None, monkeypatch: pytest.MonkeyPatch, db: None
) -> list[str]:
    """Summaries on with the offline backend; records the whole-session reads of the pass."""
    used: list[str] = []
    fold = TranscriptStore.read_session

    def spy_fold(self: TranscriptStore, key: str, **kw: Any) -> Any:
        used.append("fold")
        return fold(self, key, **kw)

    monkeypatch.setattr(TranscriptStore, "read_session", spy_fold)
    return used


def test_the_pass_reads_a_short_session_once_through_the_fold(pass_env, make_slot, store):
    from summaries.core.sidecar import read_strict
    from summaries.services import PassOutcome, PassResult, summary_generate

    key = make_slot("short", turns=3).session.key
    pass_env.clear()  # the set-up's own reads
    assert summary_generate(slot_name="short") == PassOutcome(PassResult.STORED)
    assert pass_env == ["fold"]
    data = read_strict(store, key)
    assert data is not None
    assert data["user_turns"] == 3


def test_the_pass_folds_a_session_with_a_revision(pass_env, make_slot, store):
    from summaries.core.sidecar import read_strict
    from summaries.services import PassOutcome, PassResult, summary_generate

    key = make_slot("folded", turns=3).session.key
    target = store.read_file(key).rows[-1]["ts"]
    store.append_revision(key, target, {"content": "Fixed bug 2 after all, tests pass."})
    pass_env.clear()
    assert summary_generate(slot_name="folded") == PassOutcome(PassResult.STORED)
    assert pass_env == ["fold"]
    data = read_strict(store, key)
    assert data is not None
    assert data["user_turns"] == 3
