"""Archive files: names, headers, ordering, and retention by the header's ``archived_at``."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from tests.transcripts.helpers import line, raw_lines, row, ts_at
from transcripts.core.archive import (
    archive_candidates,
    cleanup_archives,
    read_archived_at,
    write_archive,
)

NOW = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)


def _archive(directory: Path, name: str, archived_at: object, *, mtime: datetime) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    header = {"_type": "archive", "reason": "rotate", "archived_at": archived_at, "count": 1}
    path.write_bytes(line(header) + line(row("user", "old", ts_at(1))))
    stamp = int(mtime.timestamp())
    os.utime(path, (stamp, stamp))
    return path


def test_write_archive_names_the_file_after_the_stem_and_local_time(tmp_path: Path) -> None:
    lines = [line(row("user", "a", ts_at(1)))[:-1], b"raw bad bytes \xff"]
    path = write_archive(tmp_path / "archive", "dashboard_s1", lines, "rotate", now=NOW, fsync=True)
    assert path.name == f"dashboard_s1__{NOW.astimezone():%Y%m%d-%H%M%S}.jsonl"
    assert raw_lines(path)[1:] == lines
    header = orjson.loads(raw_lines(path)[0])
    assert header == {
        "_type": "archive",
        "reason": "rotate",
        "archived_at": NOW.astimezone().replace(tzinfo=None).isoformat(),
        "count": 2,
    }


def test_write_archive_never_overwrites_an_existing_archive(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    paths = [
        write_archive(directory, "k.with.dots", [b"{}"], "rewind", now=NOW, fsync=False)
        for _ in range(12)
    ]
    base = f"k.with.dots__{NOW.astimezone():%Y%m%d-%H%M%S}"
    assert [p.name for p in paths] == [f"{base}.jsonl"] + [
        f"{base}-{i}.jsonl" for i in range(1, 12)
    ]
    assert archive_candidates(directory, "k.with.dots") == paths  # oldest first, -10 after -9


def test_archive_candidates_match_only_the_given_stems(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    directory.mkdir()
    names = [
        "s1__20260101-000000.jsonl",
        "s1__20251231-235959.jsonl",
        "s1___20260101-000000.jsonl",  # stem "s1_"
        "s10__20260101-000000.jsonl",
        "s1__20260101-000000__20260102-000000.jsonl",  # stem "s1__20260101-000000"
        "s1__notadate.jsonl",
        "s1__20260101-000000.jsonl.tmp",
        "legacy__20250101-000000.jsonl",
    ]
    for name in names:
        (directory / name).write_bytes(b"")
    found = [p.name for p in archive_candidates(directory, "s1", "legacy")]
    assert found == [
        "legacy__20250101-000000.jsonl",
        "s1__20251231-235959.jsonl",
        "s1__20260101-000000.jsonl",
    ]
    assert archive_candidates(tmp_path / "missing", "s1") == []


def test_read_archived_at_reads_the_header(tmp_path: Path) -> None:
    naive = _archive(tmp_path, "a__x.jsonl", "2026-01-01T10:00:00", mtime=NOW)
    aware = _archive(tmp_path, "b__x.jsonl", "2026-01-01T10:00:00Z", mtime=NOW)
    assert read_archived_at(naive) == datetime(2026, 1, 1, 10, 0).astimezone()
    assert read_archived_at(aware) == datetime(2026, 1, 1, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage\n",
        line(row("user", "no header", ts_at(1))),
        line({"_type": "metadata", "archived_at": "2020-01-01T00:00:00"}),
        line({"_type": "archive", "reason": "rotate", "archived_at": "soon"}),
        line({"_type": "archive", "reason": "rotate"}),
    ],
)
def test_undatable_archives_are_kept(tmp_path: Path, content: bytes) -> None:
    directory = tmp_path / "archive"
    directory.mkdir()
    path = directory / "s1__20000101-000000.jsonl"
    path.write_bytes(content)
    os.utime(path, (0, 0))  # ancient mtime: must not matter
    decisions = cleanup_archives(directory, 1, NOW, dry_run=False)
    assert [(d.path, d.archived_at, d.expired) for d in decisions] == [(path, None, False)]
    assert path.exists()


def test_retention_uses_the_header_not_the_file_mtime(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    old_header_new_mtime = _archive(
        directory, "s1__20260101-000000.jsonl", "2026-01-01T00:00:00+00:00", mtime=NOW
    )
    new_header_old_mtime = _archive(
        directory,
        "s2__20260330-000000.jsonl",
        "2026-03-30T00:00:00+00:00",
        mtime=NOW - timedelta(days=400),
    )
    decisions = {d.path: d.expired for d in cleanup_archives(directory, 30, NOW, dry_run=False)}
    assert decisions == {old_header_new_mtime: True, new_header_old_mtime: False}
    assert not old_header_new_mtime.exists()
    assert new_header_old_mtime.exists()


def test_retention_boundary(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    inside = _archive(directory, "a__1.jsonl", (NOW - timedelta(days=30)).isoformat(), mtime=NOW)
    outside = _archive(
        directory, "b__1.jsonl", (NOW - timedelta(days=30, seconds=1)).isoformat(), mtime=NOW
    )
    cleanup_archives(directory, 30, NOW, dry_run=False)
    assert inside.exists()
    assert not outside.exists()


def test_dry_run_reports_but_deletes_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    old = _archive(directory, "s1__1.jsonl", "2020-01-01T00:00:00+00:00", mtime=NOW)
    decisions = cleanup_archives(directory, 30, NOW, dry_run=True)
    assert [(d.path, d.expired) for d in decisions] == [(old, True)]
    assert old.exists()


def test_negative_retention_disables_cleanup(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    old = _archive(directory, "s1__1.jsonl", "2000-01-01T00:00:00+00:00", mtime=NOW)
    assert cleanup_archives(directory, -1, NOW, dry_run=False) == []
    assert old.exists()


def test_naive_header_is_local_time_for_retention(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    local_now = NOW.astimezone()
    naive_old = (local_now - timedelta(days=8)).replace(tzinfo=None).isoformat()
    naive_new = (local_now - timedelta(days=6)).replace(tzinfo=None).isoformat()
    old = _archive(directory, "a__1.jsonl", naive_old, mtime=NOW)
    new = _archive(directory, "b__1.jsonl", naive_new, mtime=NOW)
    cleanup_archives(directory, 7, NOW, dry_run=False)
    assert not old.exists()
    assert new.exists()


def test_cleanup_of_a_missing_archive_dir_is_a_no_op(tmp_path: Path) -> None:
    assert cleanup_archives(tmp_path / "nope", 30, NOW, dry_run=False) == []


def test_which_archives_belong_to_the_session_is_one_rule() -> None:
    from transcripts.core.archive import Membership, membership

    assert membership(None, 0) is Membership.SESSION  # no header: read as a rotate archive
    assert membership({"reason": "rotate", "generation": 2}, 2) is Membership.SESSION
    assert membership({"reason": "rewind", "generation": 2}, 2) is Membership.SET_ASIDE
    assert membership({"reason": "rotate", "generation": 3}, 2) is Membership.UNLANDED
