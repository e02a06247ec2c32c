"""ts stamping: offset-aware ISO strings, strictly increasing per file whatever the clock does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.transcripts.helpers import (
    KEY,
    FakeClock,
    assert_strictly_increasing,
    file_ts,
    line,
    make_store,
    meta_line,
    parsed,
    row,
    ts_at,
)
from transcripts.core.timestamps import (
    monotonic_ts,
    newest_ts,
    parse_ts,
    ts_sort_key,
    ts_strictly_after,
)

JST = timezone(timedelta(hours=9))
BERLIN = ZoneInfo("Europe/Berlin")


def _local_zone(monkeypatch: pytest.MonkeyPatch, name: str) -> Iterator[None]:
    monkeypatch.setenv("TZ", name)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def berlin_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make the process's local time zone Europe/Berlin for one test."""
    yield from _local_zone(monkeypatch, "Europe/Berlin")


@pytest.fixture
def tokyo_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time +09:00 (no DST), the offset of the reference's example stamps."""
    yield from _local_zone(monkeypatch, "Asia/Tokyo")


def test_format_is_offset_aware_isoformat_and_omits_zero_microseconds(
    tokyo_local_time: None,
) -> None:
    now = datetime(2026, 8, 5, 17, 54, 8, 435769, tzinfo=JST)
    assert monotonic_ts(None, now) == "2026-08-05T17:54:08.435769+09:00"
    assert monotonic_ts(None, now.replace(microsecond=0)) == "2026-08-05T17:54:08+09:00"


def test_default_clock_stamp_is_offset_aware() -> None:
    stamp = monotonic_ts(None)
    assert parsed(stamp).tzinfo is not None
    assert stamp[-6] in "+-"


def test_stamps_are_written_in_local_time(tokyo_local_time: None) -> None:
    assert monotonic_ts(None, datetime(2026, 8, 5, 8, 54, 8, tzinfo=UTC)) == (
        "2026-08-05T17:54:08+09:00"
    )


def test_stalled_clock_moves_one_microsecond_past_previous(tokyo_local_time: None) -> None:
    now = datetime(2026, 8, 5, 17, 54, 8, tzinfo=JST)
    first = monotonic_ts(None, now)
    second = monotonic_ts(first, now)
    third = monotonic_ts(second, now)
    assert second == "2026-08-05T17:54:08.000001+09:00"
    assert third == "2026-08-05T17:54:08.000002+09:00"


def test_backwards_clock_keeps_previous_offset_and_moves_forward() -> None:
    previous = "2026-08-05T17:54:08.435769+09:00"
    stepped_back = datetime(2026, 8, 5, 8, 0, 0, tzinfo=UTC)  # 17:00 in +09:00
    assert monotonic_ts(previous, stepped_back) == "2026-08-05T17:54:08.435770+09:00"


def test_later_clock_is_used_as_is(tokyo_local_time: None) -> None:
    previous = "2026-08-05T17:54:08+09:00"
    later = datetime(2026, 8, 5, 17, 54, 9, tzinfo=JST)
    assert monotonic_ts(previous, later) == "2026-08-05T17:54:09+09:00"


def test_dst_fold_second_pass_of_the_same_wall_time_is_a_later_instant() -> None:
    first_pass = datetime(2026, 10, 25, 2, 30, tzinfo=BERLIN)  # CEST, +02:00
    second_pass = first_pass.replace(fold=1)  # CET, +01:00: one hour later in real time
    previous = monotonic_ts(None, first_pass)
    stamp = monotonic_ts(previous, second_pass)
    # Compared in UTC: PEP 495 makes inter-zone equality with fold=1 always False.
    assert parsed(stamp) == second_pass.astimezone(UTC)  # not bumped to previous + 1 µs
    assert parsed(stamp) - parsed(previous) == timedelta(hours=1)


def test_dst_fold_wall_clock_going_back_within_the_fold_is_not_reordered() -> None:
    # 02:50 CEST, then 02:10 CET: the wall clock reads earlier, real time moved forward.
    previous = monotonic_ts(None, datetime(2026, 10, 25, 2, 50, tzinfo=BERLIN))
    now = datetime(2026, 10, 25, 2, 10, fold=1, tzinfo=BERLIN)
    assert parsed(monotonic_ts(previous, now)) == now.astimezone(UTC)


def test_dst_fold_with_berlin_local_time_stamps_stay_strictly_increasing(
    tmp_path: Path, berlin_local_time: None
) -> None:
    # A local wall clock passing 02:30 twice; then a step back into the first pass.
    clock = FakeClock(datetime(2026, 10, 25, 2, 30))  # noqa: DTZ001 - local wall clock, +02:00
    store = make_store(tmp_path, clock=clock)
    stamps = [store.append_row(KEY, "user", "first pass").ts[0]]
    clock.now = datetime(2026, 10, 25, 2, 30, fold=1)  # noqa: DTZ001 - +01:00, an hour later
    stamps += store.append_row(KEY, "assistant", "second pass").ts
    clock.now = datetime(2026, 10, 25, 2, 45)  # noqa: DTZ001 - 45 min before the previous row
    stamps += store.append_row(KEY, "user", "stepped back").ts
    assert stamps[0].endswith("+02:00")
    assert stamps[1].endswith("+01:00")
    assert parsed(stamps[1]) - parsed(stamps[0]) == timedelta(hours=1)
    assert parsed(stamps[2]) == parsed(stamps[1]) + timedelta(microseconds=1)
    assert file_ts(store.path(KEY)) == stamps


def test_naive_legacy_previous_is_read_as_local_time() -> None:
    legacy = "2026-01-15T10:00:00"
    same_instant = datetime(2026, 1, 15, 10, 0, 0).astimezone()
    stamp = monotonic_ts(legacy, same_instant)
    assert parsed(stamp) == same_instant + timedelta(microseconds=1)
    later = same_instant + timedelta(seconds=5)
    assert parsed(monotonic_ts(legacy, later)) == later


def test_naive_legacy_previous_in_berlin_local_time(berlin_local_time: None) -> None:
    legacy = "2026-01-15T10:00:00"  # 09:00 UTC in Berlin winter time
    clock_in_utc = datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    assert parsed(monotonic_ts(legacy, clock_in_utc)) == clock_in_utc
    clock_before = datetime(2026, 1, 15, 8, 59, tzinfo=UTC)
    bumped = monotonic_ts(legacy, clock_before)
    assert parsed(bumped) == datetime(2026, 1, 15, 9, 0, 0, 1, tzinfo=UTC)
    assert parsed(bumped).utcoffset() is not None


@pytest.mark.parametrize("previous", [None, "", "   ", "garbage", "2026-13-45T99:00:00", 12345])
def test_unparseable_previous_means_now(previous: object, tokyo_local_time: None) -> None:
    now = datetime(2026, 8, 5, 17, 54, 8, tzinfo=JST)
    assert monotonic_ts(previous, now) == "2026-08-05T17:54:08+09:00"


def test_naive_now_is_stamped_offset_aware() -> None:
    stamp = monotonic_ts(None, datetime(2026, 8, 5, 17, 54, 8))  # noqa: DTZ001 - naive on purpose
    assert parsed(stamp).utcoffset() is not None
    assert stamp[-6] in "+-"


def test_parse_ts_accepts_z_suffix_and_surrounding_space() -> None:
    assert parse_ts(" 2026-08-05T08:54:08Z ") == datetime(2026, 8, 5, 8, 54, 8, tzinfo=UTC)


@pytest.mark.parametrize("value", [None, "", 1.5, "yesterday", ["2026-01-01"]])
def test_parse_ts_returns_none_for_anything_unusable(value: object) -> None:
    assert parse_ts(value) is None


def test_sort_key_puts_unparseable_last() -> None:
    stamps = ["bogus", ts_at(5), ts_at(1)]
    assert sorted(stamps, key=ts_sort_key) == [ts_at(1), ts_at(5), "bogus"]


def test_strictly_after_compares_instants_across_offsets() -> None:
    assert ts_strictly_after("2026-08-05T18:00:00+09:00", "2026-08-05T08:59:59+00:00") is True
    assert ts_strictly_after("2026-08-05T17:00:00+09:00", "2026-08-05T08:59:59+00:00") is False
    assert ts_strictly_after(ts_at(2), ts_at(1)) is True
    assert ts_strictly_after(ts_at(1), ts_at(1)) is False
    assert ts_strictly_after("2026-08-05T10:00:00.5+00:00", "2026-08-05T10:00:00+00:00") is True
    assert ts_strictly_after("nonsense", ts_at(1)) is None


# ---------------------------------------------------------------- through the store


def test_store_stamps_strictly_increase_with_a_stalled_clock(tmp_path: Path) -> None:
    store = make_store(tmp_path, clock=FakeClock())  # never moves
    stamps = []
    for i in range(5):
        stamps += store.append_row(KEY, "user" if i % 2 else "assistant", f"m{i}").ts
    stamps += store.append_rows(KEY, [{"role": "assistant", "content": c} for c in "abc"]).ts
    stamps += store.append_revision(KEY, stamps[0], {"cls": "stopped"}).ts
    stamps += store.append_row(KEY, "user", "after the revision").ts
    assert_strictly_increasing(stamps)
    assert file_ts(store.path(KEY)) == stamps


def test_store_stamps_strictly_increase_with_a_backwards_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    store = make_store(tmp_path, clock=clock)
    stamps = store.append_row(KEY, "user", "one").ts
    clock.shift(-timedelta(seconds=10))
    stamps += store.append_row(KEY, "assistant", "two").ts
    stamps += store.append_revision(KEY, stamps[0], {"meta": {"x": 1}}).ts
    clock.shift(-timedelta(hours=1))
    stamps += store.append_row(KEY, "user", "three").ts
    assert_strictly_increasing(stamps)
    assert parsed(stamps[1]) == parsed(stamps[0]) + timedelta(microseconds=1)
    assert file_ts(store.path(KEY)) == stamps


def test_store_reads_previous_ts_from_disk_not_from_memory(tmp_path: Path) -> None:
    # Another writer (another process) appended a row stamped in the future.
    store = make_store(tmp_path, clock=FakeClock())
    store.append_row(KEY, "user", "mine")
    future = ts_at(3600)
    with store.path(KEY).open("ab") as fp:
        fp.write(line(row("assistant", "theirs", future)))
    stamp = store.append_row(KEY, "user", "mine again").ts[0]
    assert parsed(stamp) == parsed(future) + timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("last_content", "torn_tail"),
    [
        ("x" * 200_000, b""),
        ("committed", b'{"role":"assistant","content":"torn mid-wri'),
        ("y" * 150_000, b'{"role":"assistant","content":"' + b"z" * 300_000),
    ],
    ids=["behind-a-200-kb-last-row", "torn-fragment", "large-torn-fragment-after-a-large-row"],
)
def test_store_tail_read_finds_the_previous_ts(
    tmp_path: Path, last_content: str, torn_tail: bytes
) -> None:
    """The clock steps back; the new stamp still follows the last committed row's."""
    clock = FakeClock()
    store = make_store(tmp_path, clock=clock)
    last = store.append_row(KEY, "assistant", last_content).ts[0]
    with store.path(KEY).open("ab") as fp:
        fp.write(torn_tail)
    clock.shift(-timedelta(minutes=5))
    stamp = store.append_row(KEY, "user", "after").ts[0]
    assert parsed(stamp) == parsed(last) + timedelta(microseconds=1)


def test_store_continues_after_a_naive_legacy_last_row(tmp_path: Path) -> None:
    store = make_store(tmp_path, clock=FakeClock(datetime(2026, 1, 15, 9, 0).astimezone()))
    path = store.path(KEY)
    path.write_bytes(meta_line() + line(row("user", "legacy", "2026-01-15T10:00:00")))
    stamp = store.append_row(KEY, "assistant", "new").ts[0]
    assert parsed(stamp) == parsed("2026-01-15T10:00:00") + timedelta(microseconds=1)
    assert parsed(stamp).utcoffset() is not None


def test_store_starts_from_now_after_an_unparseable_last_ts(tmp_path: Path) -> None:
    clock = FakeClock()
    store = make_store(tmp_path, clock=clock)
    store.path(KEY).write_bytes(meta_line() + line(row("user", "odd", "not a time")))
    assert store.append_row(KEY, "assistant", "new").ts == [clock.now.astimezone().isoformat()]


def test_newest_ts_of_one_form_or_mixed_forms_is_the_latest_instant() -> None:
    same = ["2026-11-30T10:27:00.000Z", "2026-11-30T10:29:00.000Z", "2026-11-30T10:28:00.000Z"]
    assert newest_ts(same) == parse_ts("2026-11-30T10:29:00.000Z")
    # Mixed forms and offsets: compared as instants, never as strings.
    mixed = ["2026-11-30T10:27:00.000Z", "2026-11-30T11:00:00+01:00", "2026-11-30T10:26:59Z"]
    assert newest_ts(mixed) == parse_ts("2026-11-30T10:27:00.000Z")
    # A greatest string no database column can take gives way to the next instant.
    assert newest_ts(["9999-12-31T23:59:59.000Z", "2026-11-30T10:27:00.000Z"]) == parse_ts(
        "2026-11-30T10:27:00.000Z"
    )
    assert newest_ts([]) is None
    assert newest_ts(["not a time", None]) is None
