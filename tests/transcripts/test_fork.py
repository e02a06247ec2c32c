"""Fork materializes its seed: the child's own file holds the parent's rows as of the fork.

Nothing a later owner of the parent's name (or of its file stem) writes, and nothing that
happens to the parent, reaches the fork; ``forked_from`` is provenance no read follows.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from tests.transcripts.helpers import (
    KEY,
    assert_strictly_increasing,
    contents,
    file_ts,
    fill_session,
    kinds,
    line,
    meta_line,
    row,
    ticking_store,
    ts_at,
)
from transcripts.core.errors import SessionExists, SessionNotFound, TranscriptWriteError
from transcripts.core.store import TranscriptStore

CHILD = "dashboard:child"


def own_rows(store: TranscriptStore, key: str) -> list[dict[str, Any]]:
    """The rows of the key's current file alone (no archive, no other file)."""
    return store.read_file(key).rows


def test_the_child_file_holds_the_seed_and_line_zero_records_provenance(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 4)
    store.append_revision(KEY, file_ts(store.path(KEY))[1], {"content": "patched"})
    parent = store.read_session(KEY)
    identity = store.identity(KEY)
    assert identity is not None
    assert store.fork(KEY, CHILD, {"title": "t", "forked_from": "dashboard:other"}) == 4
    assert own_rows(store, CHILD) == parent.rows  # in the child's own file
    assert store.read_session(CHILD).rows == parent.rows
    assert kinds(store.read_file(CHILD)) == []
    meta = store.read_metadata(CHILD)
    assert meta is not None
    provenance = {k: meta[k] for k in meta if k.startswith("fork")}
    assert provenance == {
        "forked_from": KEY,  # the caller cannot forge it
        "fork_parent_sig": identity.sig,
        "fork_parent_gen": identity.gen,
        "fork_seed_len": 4,
    }
    assert meta["title"] == "t"


@pytest.mark.parametrize("later", [KEY, "dashboard:al:p", "dashboard:al_p"])
def test_deleting_or_replacing_the_parent_never_changes_the_fork(
    tmp_path: Path, later: str
) -> None:
    """``later`` names the parent itself or a key sharing its file stem (``al:p``/``al_p``)."""
    store = ticking_store(tmp_path)
    parent_key = "dashboard:al:p" if later != KEY else KEY
    fill_session(store, 3, key=parent_key)
    store.fork(parent_key, CHILD)
    store.append_row(CHILD, "assistant", "child own")
    before = store.read_session(CHILD).rows
    assert len(before) == 4
    assert store.delete(parent_key)
    assert store.read_session(CHILD).rows == before
    store.append_row(later, "user", "my password is hunter2", metadata={"app": "other"})
    assert store.path(later) == store.path(parent_key)
    assert store.read_session(CHILD).rows == before


def test_the_fork_keeps_the_parents_position_order_and_its_ts_keep_growing(
    tmp_path: Path,
) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 6)
    store.append_revision(KEY, stamps[5], {"_after_ts": stamps[1]})  # 0 1 5 2 3 4
    store.append_revision(KEY, stamps[3], {"_after_ts": ""})  # 3 first
    parent = store.read_session(KEY).rows
    assert [r["ts"] for r in parent] != sorted(r["ts"] for r in parent)
    store.fork(KEY, CHILD)
    assert store.read_session(CHILD).rows == parent
    assert kinds(store.read_file(CHILD)) == []
    appended = store.append_row(CHILD, "user", "next").ts[0]
    assert_strictly_increasing(file_ts(store.path(CHILD)))
    assert appended not in {r["ts"] for r in parent}
    assert store.read_session(CHILD).rows[:-1] == parent


def test_a_seed_over_the_size_limit_is_rotated_into_the_childs_own_archive(
    tmp_path: Path,
) -> None:
    fill_session(ticking_store(tmp_path), 12, size=100)
    small = ticking_store(tmp_path, max_bytes=800, keep_lines=4)
    parent = small.read_session(KEY).rows
    small.fork(KEY, CHILD)
    assert small.path(CHILD).stat().st_size <= 800
    assert len(own_rows(small, CHILD)) <= 4
    assert small.read_session(CHILD).rows == parent
    small.delete(KEY)
    assert small.read_session(CHILD).rows == parent


def test_an_original_style_fork_reads_only_its_own_rows(tmp_path: Path) -> None:
    """The original's fork wrote the window into the child: reading through doubled it,
    and a forged ``forked_from`` read someone else's session."""
    store = ticking_store(tmp_path)
    fill_session(store, 3)  # the session the child names
    own = [row("user", "mine", ts_at(1)), row("assistant", "answer", ts_at(2))]
    for extra in ({}, {"fork_seed_len": 3}):
        store.path(CHILD).write_bytes(
            meta_line(forked_from=KEY, **extra) + b"".join(line(r) for r in own)
        )
        assert contents(store.read_session(CHILD).rows) == ["mine", "answer"]


def test_a_failed_fork_write_leaves_no_child_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 3)

    def disk_full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("transcripts.core.fsutil.write_all", disk_full)
    with pytest.raises(TranscriptWriteError):
        store.fork(KEY, CHILD)
    assert not store.exists(CHILD)
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]
    monkeypatch.undo()
    assert store.fork(KEY, CHILD) == 3


def test_a_fork_during_appends_copies_one_consistent_prefix_of_the_parent(
    tmp_path: Path,
) -> None:
    """Writers keep appending to (and rotating) the parent while forks are taken: each
    fork's seed is exactly the parent's first ``fork_seed_len`` rows, never a torn mix."""
    import threading

    store = ticking_store(tmp_path, max_bytes=2_000, keep_lines=5)
    fill_session(store, 4)
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            store.append_row(KEY, "user", f"w{i}")
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        children = [f"dashboard:c{n}" for n in range(8)]
        for child in children:
            store.fork(KEY, child)
    finally:
        stop.set()
        thread.join()
    parent = store.read_session(KEY).rows
    for child in children:
        meta = store.read_metadata(child)
        assert meta is not None
        seed = store.read_session(child).rows
        assert len(seed) == meta["fork_seed_len"]
        assert seed == parent[: len(seed)]


def test_fork_reads_the_parents_first_rows_then_its_own(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 4)
    child = "dashboard:child"
    assert store.fork(KEY, child, {"title": "forked"}) == 4
    meta = store.read_metadata(child)
    assert meta is not None
    assert (meta["forked_from"], meta["fork_seed_len"], meta["title"]) == (KEY, 4, "forked")
    store.append_row(KEY, "user", "parent later")
    store.append_row(child, "user", "child own")
    parent_rows = store.read_session(KEY).rows
    child_rows = store.read_session(child).rows
    assert child_rows == [*parent_rows[:4], child_rows[-1]]
    assert child_rows[-1]["content"] == "child own"
    assert "parent later" not in contents(child_rows)
    assert "child own" not in contents(store.read_session(KEY).rows)


def test_fork_seed_survives_parent_rotation(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 6)
    seed = store.read_session(KEY).rows
    store.fork(KEY, "dashboard:child")
    ticking_store(tmp_path, max_bytes=300, keep_lines=2).rotate(KEY)
    assert store.read_session("dashboard:child").rows == seed


def test_fork_refuses_a_missing_parent_or_an_existing_child(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    with pytest.raises(SessionNotFound):
        store.fork("dashboard:none", "dashboard:child")
    assert not store.exists("dashboard:child")
    fill_session(store, 2)
    store.append_row("dashboard:child", "user", "exists")
    with pytest.raises(SessionExists):
        store.fork(KEY, "dashboard:child")
    assert contents(store.read_session("dashboard:child").rows) == ["exists"]


def test_fork_of_a_fork_holds_both_seeds(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 2)
    store.fork(KEY, "dashboard:c1")
    store.append_row("dashboard:c1", "user", "c1 row")
    store.fork("dashboard:c1", "dashboard:c2")
    store.append_row("dashboard:c2", "user", "c2 row")
    assert contents(store.read_session("dashboard:c2").rows)[-2:] == ["c1 row", "c2 row"]
    assert len(store.read_session("dashboard:c2").rows) == 4
