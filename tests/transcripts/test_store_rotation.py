"""Rotation (the original's size limit, revisions folded) and the archives it writes and chains."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from tests.transcripts.helpers import (
    BASE,
    KEY,
    FakeClock,
    archive_files,
    assert_strictly_increasing,
    contents,
    file_ts,
    fill_session,
    json_lines,
    kinds,
    line,
    line_zero,
    make_store,
    meta_line,
    raw_lines,
    row,
    set_mtime_ns,
    ticking_store,
    ts_at,
)
from transcripts.core.store import TranscriptStore

ODD_MTIME = 1_767_225_600_123_456_789  # a value no kernel tick would produce by itself


# ---------------------------------------------------------------- rotation


def test_append_past_max_bytes_rotates_keeping_the_newest_rows(tmp_path: Path) -> None:
    store = ticking_store(tmp_path, max_bytes=2000, keep_lines=5)
    sigs = []
    for i in range(30):
        sigs.append(store.append_row(KEY, "user", f"row {i:02d} " + "x" * 100).identity.sig)
        assert store.path(KEY).stat().st_size <= 2000
    assert sigs == sorted(set(sigs))  # every append moved sig, rotation included
    view = store.read_session(KEY)
    assert contents(view.rows) == [f"row {i:02d} " + "x" * 100 for i in range(30)]
    archives = archive_files(store)
    assert archives
    assert all(line_zero(a)["reason"] == "rotate" for a in archives)
    assert sum(line_zero(a)["count"] for a in archives) + len(store.read_file(KEY).rows) == 30
    assert store.identity(KEY).gen == len(archives)  # type: ignore[union-attr]
    assert_strictly_increasing(r["ts"] for r in view.rows)


def test_rotation_keeps_at_most_keep_lines_rows(tmp_path: Path) -> None:
    stamps = fill_session(ticking_store(tmp_path), 10)
    small = ticking_store(tmp_path, max_bytes=600, keep_lines=3)
    assert small.path(KEY).stat().st_size > 600
    assert small.rotate(KEY) == 7
    assert [r["ts"] for r in small.read_file(KEY).rows] == stamps[7:]


def test_rotation_keeps_the_most_newest_rows_that_fit_in_max_bytes(tmp_path: Path) -> None:
    stamps = fill_session(ticking_store(tmp_path), 12, size=300)
    small = ticking_store(tmp_path, max_bytes=1500, keep_lines=200)
    dropped = small.rotate(KEY)
    lines = raw_lines(small.path(KEY))
    kept = len(lines) - 1
    assert dropped + kept == 12
    assert 1 <= kept < 12
    assert [r["ts"] for r in small.read_file(KEY).rows] == stamps[dropped:]
    size = small.path(KEY).stat().st_size
    assert size <= 1500
    one_more = len(line(row("user", "m0:" + "x" * 300, stamps[0])))
    assert size + one_more > 1500  # keeping one more row would not have fit


def test_rotation_writes_metadata_like_the_original(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 6, title="T", unknown={"k": 1})
    store.update_metadata(KEY, {"last_consolidated": 4, "rotation_generation": 7})
    small = ticking_store(tmp_path, max_bytes=300, keep_lines=2)
    small.rotate(KEY)
    meta = small.read_metadata(KEY)
    assert meta is not None
    assert meta["rotation_generation"] == 8
    assert meta["last_consolidated"] == 0
    assert meta["title"] == "T"
    assert meta["unknown"] == {"k": 1}
    assert datetime.fromisoformat(meta["rotated_at"]).tzinfo is not None
    assert next(iter(meta)) == "_type"


def test_rotation_restores_the_exact_mtime(tmp_path: Path) -> None:
    fill_session(ticking_store(tmp_path), 10)
    small = ticking_store(tmp_path, max_bytes=300, keep_lines=2)
    set_mtime_ns(small.path(KEY), ODD_MTIME)
    assert small.rotate(KEY) > 0
    assert small.sig(KEY) == ODD_MTIME


def test_rotation_folds_revisions_into_kept_and_archived_rows(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 8)
    for i in (1, 6):
        store.append_revision(KEY, stamps[i], {"cls": f"rev{i}"})
        store.append_revision(KEY, stamps[i], {"cls": f"final{i}", "meta": {"k": i}})
    pre_file = store.read_file(KEY).rows
    pre_session = store.read_session(KEY).rows
    small = ticking_store(tmp_path, max_bytes=800, keep_lines=3)
    dropped = small.rotate(KEY)
    assert dropped == 5
    post = small.read_file(KEY)
    assert post.rows == pre_file[dropped:]  # kept rows' folded content unchanged
    assert post.report.revisions == 0  # revisions folded into their base rows
    assert kinds(post) == []
    [archive] = archive_files(small)
    archived = json_lines(archive)[1:]
    assert archived == pre_file[:dropped]  # archived rows carry their revisions folded in
    assert all("_type" not in a for a in archived)
    assert small.read_session(KEY).rows == pre_session


def test_rotation_preserves_the_position_order_of_kept_rows(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 8)
    store.append_revision(KEY, stamps[7], {"_after_ts": stamps[4]})  # ... 4 7 5 6
    store.append_revision(KEY, stamps[5], {"_after_ts": ""})  # 5 first
    store.append_revision(KEY, stamps[6], {"_after_ts": stamps[7]})  # ... 4 7 6
    pre = store.read_file(KEY)
    small = ticking_store(tmp_path, max_bytes=800, keep_lines=4)
    assert small.rotate(KEY) == 4
    kept = set(stamps[4:])
    post = small.read_file(KEY)
    assert post.rows == [r for r in pre.rows if r["ts"] in kept]
    assert kinds(post) == []
    assert_strictly_increasing(file_ts(small.path(KEY)))
    # Appending after the rotation keeps both the order and strictly increasing ts.
    store.append_row(KEY, "user", "new")
    assert [r["ts"] for r in store.read_file(KEY).rows][:-1] == [r["ts"] for r in post.rows]
    assert_strictly_increasing(file_ts(store.path(KEY)))


def test_rotation_fails_closed_when_the_archive_cannot_be_written(tmp_path: Path) -> None:
    fill_session(ticking_store(tmp_path), 10)
    (tmp_path / "archive").write_text("a file where the archive directory should be")
    small = ticking_store(tmp_path, max_bytes=300, keep_lines=2)
    set_mtime_ns(small.path(KEY), ODD_MTIME)
    before = small.path(KEY).read_bytes()
    assert small.rotate(KEY) == 0
    assert small.path(KEY).read_bytes() == before
    assert small.sig(KEY) == ODD_MTIME
    # An append that triggers the failing rotation still commits its row.
    result = small.append_row(KEY, "user", "still appended")
    assert small.read_file(KEY).rows[-1]["ts"] == result.ts[0]
    assert small.identity(KEY).gen == 0  # type: ignore[union-attr]


def test_a_single_unsplittable_row_is_not_rotated(tmp_path: Path) -> None:
    store = ticking_store(tmp_path, max_bytes=1000)
    store.append_row(KEY, "assistant", "x" * 5000)
    before = store.path(KEY).read_bytes()
    assert store.rotate(KEY) == 0
    assert store.path(KEY).read_bytes() == before
    assert archive_files(store) == []
    assert store.identity(KEY).gen == 0  # type: ignore[union-attr]


def test_rotation_under_the_limit_does_nothing(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 5)
    before = store.path(KEY).read_bytes()
    assert store.rotate(KEY) == 0
    assert store.path(KEY).read_bytes() == before
    assert store.rotate("dashboard:missing") == 0


def test_forced_rotation_folds_revisions_and_advances_gen(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    stamps = fill_session(store, 3)
    store.append_revision(KEY, stamps[0], {"cls": "x"})
    pre = store.read_session(KEY).rows
    assert store.rotate(KEY, force=True) == 0
    assert store.read_file(KEY).report.revisions == 0
    assert store.read_session(KEY).rows == pre
    assert store.identity(KEY).gen == 1  # type: ignore[union-attr]


def test_rotation_archives_lines_it_cannot_read_instead_of_destroying_them(
    tmp_path: Path,
) -> None:
    store = ticking_store(tmp_path)
    fill_session(store, 3)
    with store.path(KEY).open("ab") as fp:
        fp.write(b"\xff\xfe binary junk\n")
        fp.write(line({"_type": "bookmark", "note": "a record type from a newer version"}))
    fill_session(store, 3)
    small = ticking_store(tmp_path, max_bytes=300, keep_lines=2)
    small.rotate(KEY)
    everything = b"".join(p.read_bytes() for p in [small.path(KEY), *archive_files(small)])
    assert b"\xff\xfe binary junk" in everything
    assert b"a record type from a newer version" in everything


def test_rotation_of_an_original_system_file(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    meta = {"_type": "metadata", "created_at": ts_at(0), "last_consolidated": 0, "agent": "x"}
    rows = [row("user" if i % 2 else "assistant", f"é{i}" * 20, ts_at(i)) for i in range(1, 9)]
    store.path(KEY).write_text("".join(json.dumps(r) + "\n" for r in [meta, *rows]))
    small = ticking_store(tmp_path, max_bytes=1000, keep_lines=3)
    assert small.rotate(KEY) == 5
    assert small.read_session(KEY).rows == rows
    assert small.read_metadata(KEY)["agent"] == "x"  # type: ignore[index]


def test_rotation_folds_a_revision_into_a_legacy_row_with_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    # The original's json.dumps could write "\\ud800"; the reader accepts it as a row.
    store = ticking_store(tmp_path)
    target = ts_at(1)
    legacy = json.dumps({"_type": "metadata", "created_at": ts_at(0), "last_consolidated": 0})
    legacy += "\n" + json.dumps(row("assistant", "half \ud800 pair", target)) + "\n"
    store.path(KEY).write_text(legacy)
    store.append_revision(KEY, target, {"cls": "stopped"})
    fill_session(store, 6)
    pre = store.read_session(KEY).rows
    assert pre[0]["content"] == "half \ud800 pair"
    small = ticking_store(tmp_path, max_bytes=300, keep_lines=2)
    result = small.append_row(KEY, "user", "triggers a rotation")  # must not raise
    assert small.read_session(KEY).rows == [*pre, small.read_session(KEY).rows[-1]]
    assert small.read_session(KEY).rows[-1]["ts"] == result.ts[0]
    assert small.identity(KEY).gen == 1  # type: ignore[union-attr]


# ---------------------------------------------------------------- archives: naming and chaining


def test_archive_name_header_and_collision_suffixes(tmp_path: Path) -> None:
    clock = FakeClock(BASE)  # every archive in the same second
    store = make_store(tmp_path, clock=clock)
    for _ in range(3):
        stamps = fill_session(store, 2)
        store.rewind(KEY, stamps[0])
    stamp = BASE.astimezone().strftime("%Y%m%d-%H%M%S")
    names = [p.name for p in archive_files(store)]
    assert sorted(names) == sorted(
        [
            f"dashboard_s1__{stamp}.jsonl",
            f"dashboard_s1__{stamp}-1.jsonl",
            f"dashboard_s1__{stamp}-2.jsonl",
        ]
    )
    header = line_zero(store.archive_dir / f"dashboard_s1__{stamp}.jsonl")
    # The original's four keys, in its order, plus the generation the rewrite produced.
    assert list(header) == ["_type", "reason", "archived_at", "count", "generation"]
    assert header == {
        "_type": "archive",
        "reason": "rewind",
        "archived_at": BASE.astimezone().replace(tzinfo=None).isoformat(),
        "count": 1,
        "generation": 1,
    }
    assert datetime.fromisoformat(header["archived_at"]).tzinfo is None  # naive, as the original


def test_read_session_chains_rotation_archives_oldest_first(tmp_path: Path) -> None:
    clock = FakeClock(step=timedelta(seconds=1))
    store = make_store(tmp_path, clock=clock, max_bytes=600, keep_lines=2)
    for i in range(25):
        store.append_row(KEY, "user", f"row {i:02d} " + "y" * 40)
    view = store.read_session(KEY)
    archives = archive_files(store)
    assert len(archives) > 2
    assert view.files == [f"archive/{p.name}" for p in archives] + [store.path(KEY).name]
    assert contents(view.rows) == [f"row {i:02d} " + "y" * 40 for i in range(25)]
    assert kinds(view.report) == []


def test_read_session_keeps_rotation_order_when_the_clock_steps_back(tmp_path: Path) -> None:
    """Archive names carry local wall time, which goes back at a DST fall-back or an NTP step."""
    clock = FakeClock(step=timedelta(milliseconds=1))
    store = make_store(tmp_path, clock=clock, max_bytes=600, keep_lines=2)
    for i in range(30):
        if i == 15:
            clock.shift(-timedelta(hours=1))  # e.g. 02:50 CEST → 01:50 local after the change
        store.append_row(KEY, "user", f"row {i:02d} " + "y" * 40)
    assert len(archive_files(store)) >= 4
    view = store.read_session(KEY)
    assert contents(view.rows) == [f"row {i:02d} " + "y" * 40 for i in range(30)]
    assert_strictly_increasing(r["ts"] for r in view.rows)


def test_read_session_orders_collision_suffixes_numerically(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.path(KEY).write_bytes(meta_line() + line(row("user", "current", ts_at(100))))
    store.archive_dir.mkdir()
    for n in (10, 0, 2, 1, 9):
        name = "dashboard_s1__20260101-000000" + (f"-{n}" if n else "") + ".jsonl"
        header = {
            "_type": "archive",
            "reason": "rotate",
            "archived_at": "2026-01-01T00:00:00",
            "count": 1,
        }
        (store.archive_dir / name).write_bytes(line(header) + line(row("user", f"a{n}", ts_at(n))))
    (store.archive_dir / "dashboard_s1__garbage.jsonl").write_bytes(
        line(row("user", "no", ts_at(50)))
    )
    (store.archive_dir / "dashboard_s10__20250101-000000.jsonl").write_bytes(
        line(row("user", "other session", ts_at(0)))
    )
    assert contents(store.read_session(KEY).rows) == ["a0", "a1", "a2", "a9", "a10", "current"]


def test_archive_of_a_rotation_that_never_replaced_the_file_is_not_read_twice(tmp_path):
    """A crash between writing the archive and replacing the file (D16): the rows are
    still in the file, so the unlanded archive must not double them."""
    from transcripts.core.archive import write_archive

    store = TranscriptStore(tmp_path, fsync="never")
    for i in range(5):
        store.append_row(KEY, "user", f"row {i}", metadata={})
    before = store.read_session(KEY).rows
    raw = [line for line in store.path(KEY).read_bytes().split(b"\n")[1:3] if line]
    # What a killed rotation leaves: an archive for generation 1, the file still at 0.
    write_archive(
        store.archive_dir,
        store.path(KEY).stem,
        raw,
        "rotate",
        now=datetime.now().astimezone(),
        fsync=False,
        generation=1,
    )
    view = store.read_session(KEY)
    assert view.rows == before
    assert "unlanded_archive" in view.report.counts()
    # The next rotation also produces generation 1: it must first drop the unlanded
    # archive (its rows are in the file), or that archive would turn valid and double rows.
    store.keep_lines = 2
    assert store.rotate(KEY, force=True) == 3
    assert contents(store.read_session(KEY).rows) == [f"row {i}" for i in range(5)]
