"""A session that cannot rotate (an oversize line, e.g. from an import): appends stay O(1)
amortized instead of re-reading the file each time, and a forced rotation repairs it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.transcripts.helpers import KEY, FakeClock, fill_session, make_store
from transcripts.core.rewrite import rotation_blocker
from transcripts.core.store import TranscriptStore

MAX_LINE = 16 * 1024
MAX_BYTES = 64 * 1024


def stuck_store(root: Path) -> TranscriptStore:
    """A session over the size limit because of one oversize line: rotation refuses it."""
    store = make_store(
        root,
        clock=FakeClock(step=timedelta(milliseconds=1)),
        max_bytes=MAX_BYTES,
        max_line=MAX_LINE,
        keep_lines=5,
    )
    fill_session(store, 4)
    with store.path(KEY).open("ab") as fp:
        fp.write(b'{"role": "tool_result", "content": "' + b"z" * (5 * MAX_LINE) + b'"}\n')
    fill_session(store, 2)  # over the limit: this append tries, and fails, to rotate
    assert store.path(KEY).stat().st_size > MAX_BYTES
    assert not store.archive_paths(KEY)
    return store


def count_full_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every whole-file fold (what an append-time rotation attempt costs), recorded."""
    calls: list[str] = []
    real = TranscriptStore.read_file

    def counting(self: TranscriptStore, key: str, **kwargs: Any) -> Any:
        calls.append(key)
        return real(self, key, **kwargs)

    monkeypatch.setattr(TranscriptStore, "read_file", counting)
    return calls


def test_appends_to_a_session_that_cannot_rotate_do_not_reread_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = stuck_store(tmp_path)
    reads = count_full_reads(monkeypatch)
    for i in range(20):
        store.append_row(KEY, "assistant", f"row {i}")
    assert reads == []  # before: one whole-file fold per append
    # Once the file has doubled, one more attempt (amortized O(1) per appended byte).
    size = store.path(KEY).stat().st_size
    store.append_row(KEY, "assistant", "y" * (MAX_LINE // 2))
    while store.path(KEY).stat().st_size < 2 * size:
        store.append_rows(KEY, [{"role": "assistant", "content": "y" * 4000}] * 3)
    assert len(reads) == 1


def test_the_condition_is_reported_and_a_forced_rotation_repairs_it(tmp_path: Path) -> None:
    store = stuck_store(tmp_path)
    rows = store.read_session(KEY).rows
    blocker = rotation_blocker(store, KEY)
    assert blocker is not None
    assert "oversize" in blocker
    oversize = store.read_file(KEY).report.counts()["oversize"]
    assert oversize == 1
    store.rotate(KEY, force=True)
    assert rotation_blocker(store, KEY) is None
    assert store.path(KEY).stat().st_size <= MAX_BYTES
    assert store.read_session(KEY).rows == rows  # no row lost, none doubled
    (archive,) = store.archive_paths(KEY)
    assert b"z" * (5 * MAX_LINE) in archive.read_bytes()  # kept, as an unreadable line
    assert store.read_session(KEY).report.counts().get("oversize") == 1  # now in the archive
    store.append_row(KEY, "user", "appends go on")
    assert store.read_session(KEY).rows[-1]["content"] == "appends go on"


def test_an_ordinary_session_under_the_limit_has_no_blocker(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_bytes=MAX_BYTES)
    fill_session(store, 3)
    assert rotation_blocker(store, KEY) is None
