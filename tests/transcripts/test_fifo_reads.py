"""A FIFO in the sessions folder never blocks a read (``fsutil.open_regular``).

Opening a FIFO for reading waits for a writer: a FIFO swapped in for an archive between
the listing and the open must neither hang the page reader nor the tail reader. Each read
runs in a thread with a join timeout so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.transcripts.helpers import KEY, fill_session, ticking_store
from transcripts.core.fsutil import NotRegularFile
from transcripts.core.paging import read_page
from transcripts.core.store import TranscriptStore
from transcripts.core.storefiles import read_tail

GUARD_S = 20.0  # only bounds a hang; a passing read returns at once


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "archive" / "planted__20260101-000000.jsonl"
    path.parent.mkdir(exist_ok=True)
    os.mkfifo(path)
    yield path
    # A reader stuck in open() (a regression) is released by a writer's open.
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def run_guarded(read: Callable[[], Any]) -> Any:
    """``read()``'s result (or the exception it raised), failing if it does not return."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = read()
        except Exception as exc:  # handed to the test thread
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(GUARD_S)
    assert not thread.is_alive(), "the read blocked on a FIFO"
    if "error" in out:
        raise out["error"]
    return out["value"]


def session(tmp_path: Path) -> TranscriptStore:
    store = ticking_store(tmp_path)
    fill_session(store, 4)
    return store


def test_the_tail_reader_refuses_a_fifo_in_place_of_an_archive(tmp_path: Path, fifo: Path) -> None:
    store = session(tmp_path)
    with pytest.raises(NotRegularFile):
        run_guarded(lambda: read_tail([fifo, store.path(KEY)], 1 << 20, store.max_line))


def test_the_page_reader_skips_a_fifo_in_place_of_an_archive(
    tmp_path: Path, fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = session(tmp_path)
    expected = store.read_session(KEY).rows
    # Listed as a regular archive a moment ago, a FIFO by the time it is opened.
    monkeypatch.setattr(store, "archive_paths", lambda key: [fifo])
    page = run_guarded(lambda: read_page(store, KEY, None, 100))
    assert page is not None
    assert page.rows == expected
