"""``fsutil.atomic_write``: the one temp-file-then-rename (or link) writer."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from transcripts.core.fsutil import atomic_write


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_write_replaces_the_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b"old")
    atomic_write(path, b"new", fsync=True, mtime_ns=1_000_000_000)
    assert path.read_bytes() == b"new"
    assert path.stat().st_mtime_ns == 1_000_000_000
    assert leftovers(tmp_path) == []


def test_exclusive_never_replaces_a_file_that_is_there(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b"first")
    with pytest.raises(FileExistsError):
        atomic_write(path, b"second", fsync=False, exclusive=True)
    assert path.read_bytes() == b"first"
    assert leftovers(tmp_path) == []


def test_exclusive_creates_a_missing_file_with_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "key"
    atomic_write(path, b"secret", fsync=True, mode=0o600, exclusive=True)
    assert path.read_bytes() == b"secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_nlink == 1  # the temp name is gone, not a second link
    assert leftovers(tmp_path) == []


def test_chunks_are_written_in_order_and_a_failing_source_leaves_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "copy.jsonl"
    atomic_write(path, iter([b"a\n", b"b\n"]), fsync=False, exclusive=True)
    assert path.read_bytes() == b"a\nb\n"

    def refused() -> Iterator[bytes]:
        yield b"partial"
        raise ValueError("too large")

    other = tmp_path / "other.jsonl"
    with pytest.raises(ValueError, match="too large"):
        atomic_write(other, refused(), fsync=False, exclusive=True)
    assert not other.exists()
    assert leftovers(tmp_path) == []
