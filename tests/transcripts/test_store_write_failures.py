"""The store's own write failures, made real with ``RLIMIT_FSIZE`` in this process (a write
past the limit fails with EFBIG; CPython ignores SIGXFSZ): typed errors, nothing left
half-made."""

from __future__ import annotations

import errno
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from transcripts.core.errors import TranscriptWriteError
from transcripts.core.store import TranscriptStore

KEY = "dashboard:write-failure"


@contextmanager
def file_size_limit(max_bytes: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_a_create_whose_first_line_does_not_fit_leaves_no_file(tmp_path: Path) -> None:
    """An empty file left behind would hold the name: the next create would answer
    "exists" and every read "not found"."""
    store = TranscriptStore(tmp_path)
    with file_size_limit(16), pytest.raises(TranscriptWriteError) as caught:
        store.create(KEY, {"title": "x" * 200})
    assert caught.value.errno == errno.EFBIG
    assert not store.path(KEY).exists()
    assert not store.exists(KEY)

    store.create(KEY, {"title": "x" * 200})  # the name is free: the retry creates it
    assert (store.read_session(KEY).metadata or {})["title"] == "x" * 200


def test_an_append_that_does_not_fit_is_refused_and_reports_the_size_before(
    tmp_path: Path,
) -> None:
    store = TranscriptStore(tmp_path)
    store.create(KEY, {"title": "t"})
    first = store.append_row(KEY, "user", "hello")
    size = store.path(KEY).stat().st_size
    assert first.prior_size < size == first.identity.size
    with file_size_limit(size + 10), pytest.raises(TranscriptWriteError) as caught:
        store.append_row(KEY, "assistant", "y" * 500)
    assert caught.value.errno == errno.EFBIG
    assert store.path(KEY).stat().st_size == size  # truncated back
    second = store.append_row(KEY, "assistant", "fits now")
    assert second.prior_size == size
