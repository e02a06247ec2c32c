"""The O(page) reader (``core/paging.py``) against the one full fold.

For random sessions (rows, revisions that target rows far back, position moves,
rotations, rewinds, metadata rewrites, damaged and torn lines), every page after every
cursor must be exactly the full fold's slice, with the whole session's report and the
same ``next`` cursor, whether the offset index is cold or was extended append by append.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.transcripts.helpers import KEY, FakeClock, fill_session, make_store
from transcripts.core.errors import SessionNotFound
from transcripts.core.paging import IndexCache, InvalidCursor, Page, read_page
from transcripts.core.store import SessionView, TranscriptStore

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMITS = (1, 3, 100)


def reference(view: SessionView, after: str | None, limit: int) -> Page:
    """The full fold, sliced: what the transcript GET answered before the index existed."""
    rows = view.rows
    start = 0
    if after:
        ts, nth = after, 1
        if "#" in after:
            ts, _, n = after.rpartition("#")
            nth = int(n) if n.isdigit() and int(n) > 0 else 0
        bearers = [i for i, r in enumerate(rows) if r.get("ts") == ts]
        if nth < 1 or nth > len(bearers):
            raise InvalidCursor(after)
        start = bearers[nth - 1] + 1
    page = rows[start : start + limit]
    cursor = None
    if page and start + len(page) < len(rows):
        last = start + len(page) - 1
        seen = sum(1 for r in rows[: last + 1] if r.get("ts") == rows[last].get("ts"))
        cursor = str(rows[last]["ts"]) + ("" if seen == 1 else f"#{seen}")
    return Page(page, view.report, cursor)


def cursors(store: TranscriptStore) -> list[str | None]:
    rows = store.read_session(KEY).rows
    out: list[str | None] = [None]
    for i, r in enumerate(rows):
        seen = sum(1 for x in rows[: i + 1] if x.get("ts") == r.get("ts"))
        out.append(str(r.get("ts")) + ("" if seen == 1 else f"#{seen}"))
    return out


def strict_page(store: TranscriptStore, after: str | None, limit: int, cache: IndexCache) -> Page:
    """``read_page``, where a fallback (None) counts as the full fold's InvalidCursor."""
    page = read_page(store, KEY, after, limit, cache=cache)
    if page is None:
        raise InvalidCursor(after)
    return page


def check_every_page(store: TranscriptStore, cache: IndexCache) -> int:
    """Compare every page; returns how many the index answered (not the fallback)."""
    fast = 0
    view = store.read_session(KEY)
    made_up = ["2001-01-01T00:00:00+00:00", "x#0", "x#2"]
    stamps = [c for c in cursors(store) if c]
    for after in cursors(store) + made_up + [f"{c}#2" for c in stamps[:2]]:
        for limit in LIMITS:
            try:
                want = reference(view, after, limit)
            except InvalidCursor:
                with pytest.raises(InvalidCursor):
                    strict_page(store, after, limit, cache)
                continue
            for index in (cache, IndexCache()):  # extended as it went, and cold
                got = read_page(store, KEY, after, limit, cache=index)
                if got is None:
                    continue
                fast += 1
                assert got.rows == want.rows, (after, limit)
                assert got.next == want.next, (after, limit)
                assert got.report.as_dict() == want.report.as_dict()
    return fast


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("rows"), st.integers(1, 4), st.integers(0, 400)),
        st.tuples(st.just("revise"), st.integers(0, 10**6), st.integers(0, 3)),
        st.tuples(st.just("move"), st.integers(0, 10**6), st.integers(0, 10**6)),
        st.tuples(st.just("rotate"), st.booleans(), st.just(0)),
        st.tuples(st.just("garbage"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("tear"), st.just(0), st.just(0)),
        st.tuples(st.just("title"), st.integers(0, 99), st.just(0)),
        st.tuples(st.just("rewind"), st.integers(0, 10**6), st.just(0)),
        st.tuples(st.just("check"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=28,
)


def current_rows(store: TranscriptStore) -> list[str]:
    return [str(r["ts"]) for r in store.read_file(KEY).rows if isinstance(r.get("ts"), str)]


def apply(store: TranscriptStore, op: tuple[str, int, int], serial: int) -> None:
    name, a, b = op
    mine = current_rows(store)
    if name == "rows":
        store.append_rows(
            KEY, [{"role": "assistant", "content": f"r{serial}-{i}" + "x" * b} for i in range(a)]
        )
    elif name == "revise" and mine:
        patches: list[dict[str, Any]] = [
            {"content": f"revised {serial}"},
            {"meta": {"n": serial}},
            {"x": serial, "content": "both"},
            {"cls": "tool"},
        ]
        patch = patches[b]
        store.append_revision(KEY, mine[a % len(mine)], patch)  # often far back
    elif name == "move" and len(mine) > 1:
        anchors = ["", *mine]
        anchor = anchors[b % len(anchors)]
        store.append_revision(KEY, mine[a % len(mine)], {"_after_ts": anchor})
    elif name == "rotate":
        store.rotate(KEY, force=bool(a))
    elif name == "garbage":
        with store.path(KEY).open("ab") as fp:
            fp.write([b"{not json}\n", b"\n", b'["an", "array"]\n'][a])
    elif name == "tear":
        with store.path(KEY).open("ab") as fp:
            fp.write(b'{"role": "assistant", "content": "half')
    elif name == "title":
        store.update_metadata(KEY, {"title": f"title {a}"})
    elif name == "rewind" and len(mine) > 1:
        store.rewind(KEY, mine[a % len(mine)])


def run_ops(ops: list[tuple[str, int, int]]) -> None:
    """Apply ``ops`` to a fresh rotating session, checking every page at each "check" and
    at the start and end."""
    root = Path(tempfile.mkdtemp(prefix="paging-"))
    try:
        store = make_store(
            root, clock=FakeClock(step=timedelta(milliseconds=1)), max_bytes=1500, keep_lines=3
        )
        fill_session(store, 3)
        cache = IndexCache()
        check_every_page(store, cache)
        for serial, op in enumerate(ops):
            apply(store, op, serial)
            if op[0] == "check":
                check_every_page(store, cache)
        check_every_page(store, cache)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@SETTINGS
@given(ops=OPS)
def test_every_page_equals_the_full_folds_slice(ops: list[tuple[str, int, int]]) -> None:
    run_ops(ops)


def test_a_rewrite_that_reuses_the_old_inode_size_and_mtime_is_indexed_anew() -> None:
    """Found by the property above: a torn line rotated out twice leaves a current file on
    the inode the index saw, at its size and (kept on purpose) its mtime, but with another
    generation; a page must not come from the stale index (it called the newest archive
    unlanded). Where the filesystem hands out another inode this passes either way."""
    run_ops([("rows", 3, 313), ("tear", 0, 0), ("check", 0, 0), ("rotate", 1, 0), ("rotate", 1, 0)])


def test_without_moves_or_legacy_ts_the_index_answers_every_page(tmp_path: Path) -> None:
    """Revisions far back, rotations and damaged lines: still O(page), still the fold."""
    store = make_store(
        tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)), max_bytes=2000, keep_lines=4
    )
    stamps = fill_session(store, 30, size=80)
    assert store.archive_paths(KEY), "the session rotated"
    cache = IndexCache()
    for i in range(6):
        mine = current_rows(store)
        store.append_revision(KEY, mine[0], {"content": f"early {i}"})
        stamps += store.append_row(KEY, "assistant", f"late {i}").ts
        with store.path(KEY).open("ab") as fp:
            fp.write(b"{damaged}\n")
    pages = sum(1 for _ in cursors(store)) * len(LIMITS) * 2
    assert check_every_page(store, cache) == pages


def test_a_position_move_falls_back_to_the_full_fold(tmp_path: Path) -> None:
    store = make_store(tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)))
    stamps = fill_session(store, 4)
    assert read_page(store, KEY, None, 10, cache=IndexCache()) is not None
    store.append_revision(KEY, stamps[3], {"_after_ts": ""})
    assert read_page(store, KEY, None, 10, cache=IndexCache()) is None


def test_a_torn_tail_falls_back_until_the_next_append(tmp_path: Path) -> None:
    store = make_store(tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)))
    fill_session(store, 3)
    cache = IndexCache()
    with store.path(KEY).open("ab") as fp:
        fp.write(b'{"role":"assistant","content":"torn')
    assert read_page(store, KEY, None, 10, cache=cache) is None
    store.append_row(KEY, "user", "after the tear")
    page = read_page(store, KEY, None, 10, cache=cache)
    assert page is not None
    assert page.rows == store.read_session(KEY).rows
    assert page.report.counts() == {"bad_json": 1}


def test_a_missing_session_is_session_not_found(tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound):
        read_page(make_store(tmp_path), KEY, None, 10, cache=IndexCache())


def test_a_tail_page_reads_the_tail_not_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the index is built, the page after the last cursor reads O(page) bytes, and
    an append folds only the new line (counted with ``os.pread``, no clock involved)."""
    store = make_store(tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)))
    fill_session(store, 2000, size=200)
    cache = IndexCache()
    assert read_page(store, KEY, None, 1, cache=cache) is not None  # builds the index
    size = store.path(KEY).stat().st_size
    last = store.append_row(KEY, "user", "one more").ts[-1]
    store.append_row(KEY, "assistant", "the newest")
    read: list[int] = []
    real = os.pread

    def counting(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting)
    page = read_page(store, KEY, last, 100, cache=cache)
    monkeypatch.undo()
    assert page is not None
    assert [r["content"] for r in page.rows] == ["the newest"]
    assert sum(read) < 16 * 1024 < size


def test_a_fifo_in_place_of_the_transcript_is_not_found_and_never_blocks(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.root.mkdir(parents=True, exist_ok=True)
    os.mkfifo(store.path(KEY))
    with pytest.raises(SessionNotFound):
        read_page(store, KEY, None, 10, cache=IndexCache())


def test_an_unlanded_archive_is_skipped_and_reported_as_the_full_fold_does(
    tmp_path: Path,
) -> None:
    """A crash between writing a rotation's archive and replacing the file: its rows are
    still in the file, so a page must not show them twice (nor a rewind's archive)."""
    from datetime import datetime

    from transcripts.core.archive import write_archive

    store = make_store(tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)))
    fill_session(store, 5)
    raw = [x for x in store.path(KEY).read_bytes().split(b"\n")[1:3] if x]
    for reason, generation in (("rotate", 1), ("rewind", 0)):
        write_archive(
            store.archive_dir,
            store.path(KEY).stem,
            raw,
            reason,
            now=datetime.now().astimezone(),
            fsync=False,
            generation=generation,
        )
    assert len(store.archive_paths(KEY)) == 2
    view = store.read_session(KEY)
    page = read_page(store, KEY, None, 100, cache=IndexCache())
    assert page is not None
    assert page.rows == view.rows
    assert page.report.as_dict() == view.report.as_dict()
    assert "unlanded_archive" in page.report.counts()
