"""The offset index while another process appends, revises and rotates the same session.

Pages read during the writes must each be a contiguous run of the final session right
after their cursor (no row skipped, doubled or invented); once the writer is done, every
page equals the full fold's slice, with the index extended (and rebuilt after each
rotation) along the way rather than built afresh.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from tests.transcripts.helpers import KEY, fill_session, make_store
from tests.transcripts.test_paging import check_every_page
from transcripts.core.paging import IndexCache, read_page
from transcripts.core.store import TranscriptStore

ROUNDS = 150


def open_store(root: Path) -> TranscriptStore:
    return make_store(root, max_bytes=6000, keep_lines=8)


def writer(root: str, done: object) -> None:
    store = open_store(Path(root))
    for i in range(ROUNDS):
        stamps = store.append_row(KEY, "assistant", f"w{i} " + "p" * 150).ts
        if i % 4 == 0:
            store.append_revision(KEY, stamps[0], {"content": f"w{i} revised"})
    done.set()  # type: ignore[attr-defined]


def test_pages_read_during_appends_and_rotations_are_consistent(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    fill_session(store, 3)
    cache = IndexCache()
    ctx = mp.get_context("fork")
    done = ctx.Event()
    child = ctx.Process(target=writer, args=(str(tmp_path), done))
    child.start()
    seen: list[tuple[str | None, list[str]]] = []
    cursor: str | None = None
    while not done.is_set():
        page = read_page(store, KEY, cursor, 5, cache=cache)
        if page is None:
            continue  # a write in progress (unterminated last line): the full fold's turn
        ts = [str(r["ts"]) for r in page.rows]
        seen.append((cursor, ts))
        if page.rows:
            cursor = ts[-1]
    child.join(30)
    assert child.exitcode == 0
    final = [str(r["ts"]) for r in store.read_session(KEY).rows]
    assert len(final) == 3 + ROUNDS
    assert len(seen) > 10
    for after, ts in seen:
        start = 0 if after is None else final.index(after) + 1
        assert ts == final[start : start + len(ts)]
    assert store.archive_paths(KEY), "the writer rotated the session"
    assert check_every_page(store, cache) > 0
