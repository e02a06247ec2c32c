"""The session page's turn windows (``session_turn_window``) against the one full fold.

For random sessions (user turns, automation and blank user rows, revisions far back,
position moves, rotations, rewinds, damaged and torn lines), turns ``first..last`` must be
exactly the full fold's rows from turn ``first``'s user row (row 0 for turn 1) to the row
before turn ``last + 1``, numbered by ``is_user_turn`` over the whole session; the turn
marks (``core/paging.py``) answer whenever the paging reader can.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kirocrew_site.dashboard import selectors as dashboard_selectors
from kirocrew_site.dashboard.selectors import TurnWindow, session_turn_window
from tests.transcripts.helpers import KEY, FakeClock, fill_session, make_store
from tests.transcripts.test_paging import apply
from transcripts import selectors as transcript_selectors
from transcripts.core.content import bound_rows
from transcripts.core.paging import PAGE_INDEX, IndexCache, turn_marks
from transcripts.core.store import TranscriptStore
from transcripts.core.user_turns import is_user_turn

MARKED: Counter[str] = Counter()  # which path answered, over the property test's examples
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
USER_TEXTS = ["ask {n}", "[system] automation {n}", "   ", "[cron notification {n}]"]

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(0, 3), st.integers(0, 300)),
        st.tuples(st.just("rows"), st.integers(1, 3), st.integers(0, 300)),
        st.tuples(st.just("revise"), st.integers(0, 10**6), st.integers(0, 3)),
        st.tuples(st.just("move"), st.integers(0, 10**6), st.integers(0, 10**6)),
        st.tuples(st.just("rotate"), st.booleans(), st.just(0)),
        st.tuples(st.just("garbage"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("rewind"), st.integers(0, 10**6), st.just(0)),
        st.tuples(st.just("check"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=30,
)


@pytest.fixture(autouse=True)
def _fresh_index() -> Any:
    PAGE_INDEX.clear()
    yield
    PAGE_INDEX.clear()


def reference(store: TranscriptStore, first: int, last: int | None) -> TurnWindow:
    """The full fold, sliced by the summarizer's turn rule."""
    view = store.read_session(KEY)
    rows = bound_rows(view.rows, view.report)
    starts = [i for i, row in enumerate(rows) if is_user_turn(row)]
    total = len(starts)
    if first <= 0:
        first += total
    first = max(1, min(first, total or 1))
    end = total if last is None else max(first, min(last, total))
    start = starts[first - 1] if total and first > 1 else 0
    stop = starts[end] if end < total else len(rows)
    return TurnWindow(rows[start:stop], view.report, False, first, end, total)


def check_windows(store: TranscriptStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dashboard_selectors, "get_store", lambda: store)
    monkeypatch.setattr(transcript_selectors, "get_store", lambda: store)
    total = reference(store, 1, None).total
    MARKED.update(["marked" if turn_marks(store, KEY) is not None else "folded"])
    spans: list[tuple[int, int | None]] = [(0, None), (-2, None), (1, None), (1, 1)]
    spans += [(k, k) for k in range(1, total + 2)] + [(k, k + 2) for k in range(1, total + 1)]
    for first, last in spans:
        want = reference(store, first, last)
        got = session_turn_window(KEY, first, last)
        assert got.rows == want.rows, (first, last)
        assert (got.first, got.last, got.total) == (want.first, want.last, want.total)
        assert got.report.as_dict() == want.report.as_dict()
        start = next(
            (
                i
                for i, r in enumerate(store.read_session(KEY).rows)
                if got.rows and r.get("ts") == got.rows[0].get("ts")
            ),
            0,
        )
        if start and not got.seen:  # the cursor before the window names the row before it
            before = store.read_session(KEY).rows[start - 1]
            assert got.after.partition("#")[0] == str(before.get("ts"))


def add_user(store: TranscriptStore, op: tuple[str, int, int], serial: int) -> None:
    _name, kind, pad = op
    text = USER_TEXTS[kind].format(n=serial) + ("x" * pad if kind == 0 else "")
    store.append_rows(KEY, [{"role": "user", "content": text}])


@SETTINGS
@given(ops=OPS)
def test_every_turn_window_equals_the_full_folds_slice(ops: list[tuple[str, int, int]]) -> None:
    root = Path(tempfile.mkdtemp(prefix="turns-"))
    monkeypatch = pytest.MonkeyPatch()
    try:
        store = make_store(
            root, clock=FakeClock(step=timedelta(milliseconds=1)), max_bytes=1500, keep_lines=3
        )
        fill_session(store, 3)
        PAGE_INDEX.clear()
        for serial, op in enumerate(ops):
            if op[0] == "user":
                add_user(store, op, serial)
            else:
                apply(store, op, serial)
            if op[0] == "check":
                check_windows(store, monkeypatch)
        check_windows(store, monkeypatch)
    finally:
        monkeypatch.undo()
        PAGE_INDEX.clear()
        shutil.rmtree(root, ignore_errors=True)


def test_turn_marks_answer_a_rotated_session_with_far_revisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Archives, revisions of other fields far back: the marks answer (no fold)."""
    store = make_store(
        tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)), max_bytes=2500, keep_lines=4
    )
    fill_session(store, 1)
    stamps: list[str] = []
    for n in range(30):
        store.append_rows(KEY, [{"role": "user", "content": f"ask {n}"}])
        store.append_rows(KEY, [{"role": "assistant", "content": f"answer {n}"}])
        stamps.append(str(store.read_file(KEY).rows[-2]["ts"]))
        if n % 7 == 6:
            store.append_revision(KEY, stamps[-1], {"meta": {"n": n}})
    assert store.archive_paths(KEY), "the session rotated"
    marks = turn_marks(store, KEY, cache=IndexCache())
    assert marks is not None
    assert marks.total == reference(store, 1, None).total
    check_windows(store, monkeypatch)
    calls: Counter[str] = Counter()
    monkeypatch.setattr(
        dashboard_selectors, "_window_folded", lambda *a: calls.update(["fold"]) or None
    )
    window = session_turn_window(KEY, -2, None)
    assert calls["fold"] == 0
    assert window.first == window.total - 2


def test_a_revised_content_falls_back_to_the_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A patch that turns an answer into a blank user row changes the numbering."""
    store = make_store(tmp_path, clock=FakeClock(step=timedelta(milliseconds=1)))
    fill_session(store, 1)
    for n in range(5):
        store.append_rows(KEY, [{"role": "user", "content": f"ask {n}"}])
    second = str(store.read_file(KEY).rows[-4]["ts"])
    store.append_revision(KEY, second, {"content": "[system] not a person"})
    assert turn_marks(store, KEY, cache=IndexCache()) is None
    check_windows(store, monkeypatch)
    # fill_session's first row is a turn too: 1 + 5, less the one the revision unmade.
    assert session_turn_window(KEY, 1, None).total == 5


def test_the_property_test_exercised_both_paths() -> None:
    assert MARKED["marked"] > 0, MARKED
    assert MARKED["folded"] > 0, MARKED
