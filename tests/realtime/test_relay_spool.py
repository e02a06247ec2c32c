"""The frame spool on ``tmp_path`` alone: files written in order are taken in order, stale
and malformed ones are deleted (never sent, never a crash), the folder is 0700 and ours."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kirocrew_site.realtime.core.spool import (
    FRESH_S,
    HEARTBEAT,
    MAX_FILE_BYTES,
    STALE_S,
    SpoolError,
    SpoolWriter,
    heartbeat_drop,
    heartbeat_fresh,
    heartbeat_touch,
    spool_prepare,
    spool_take,
)

GROUPS = ("dashboard", "app-7")


def row(n: int) -> dict[str, Any]:
    return {"type": "row", "data": {"key": "s", "ts": f"t{n}", "role": "user"}}


def accept_group(group: str) -> bool:
    return group in GROUPS


def accept_frame(frame: dict[str, Any]) -> dict[str, Any]:
    if frame.get("type") != "row":
        raise ValueError("unknown frame type")
    return frame


def take(folder: Path, **kwargs: Any) -> Any:
    now = kwargs.pop("now", time.time())
    kwargs.setdefault("limit", 1000)  # the relay's bound is its own test's subject
    return spool_take(
        folder, now=now, accept_group=accept_group, accept_frame=accept_frame, **kwargs
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    spool = tmp_path / "frames"
    spool_prepare(spool)
    return spool


def frame_files(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if not name.startswith("."))


def test_the_folder_is_created_0700_and_an_existing_one_is_made_0700(tmp_path: Path) -> None:
    spool = tmp_path / "frames"
    old = os.umask(0)  # mkdir's mode must not depend on a permissive umask
    try:
        spool_prepare(spool)
    finally:
        os.umask(old)
    assert stat.S_IMODE(spool.stat().st_mode) == 0o700
    spool.chmod(0o777)
    spool_prepare(spool)
    assert stat.S_IMODE(spool.stat().st_mode) == 0o700


def test_a_symlink_or_a_file_in_the_folders_place_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    with pytest.raises(SpoolError):
        spool_prepare(tmp_path / "link")
    (tmp_path / "file").write_text("")
    with pytest.raises(SpoolError):
        spool_prepare(tmp_path / "file")


def test_files_are_taken_in_the_order_written_and_deleted(folder: Path) -> None:
    writer = SpoolWriter()
    for n in range(30):
        writer.write(folder, [(GROUPS, [row(n)])])
    modes = {stat.S_IMODE((folder / name).stat().st_mode) for name in frame_files(folder)}
    assert modes == {0o600}
    taken = take(folder)
    assert [b.frames[0]["data"]["ts"] for b in taken.batches] == [f"t{n}" for n in range(30)]
    assert all(b.groups == GROUPS for b in taken.batches)
    assert (taken.stale, taken.malformed, taken.more) == (0, [], False)
    assert os.listdir(folder) == []


def test_two_writers_in_two_threads_keep_each_ones_order(folder: Path) -> None:
    writer = SpoolWriter()

    def write(base: int) -> None:
        for n in range(base, base + 50):
            writer.write(folder, [(GROUPS, [row(n)])])

    threads = [threading.Thread(target=write, args=(base,)) for base in (0, 1000)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stamps = [int(b.frames[0]["data"]["ts"][1:]) for b in take(folder).batches]
    assert len(stamps) == 100
    assert [s for s in stamps if s < 1000] == list(range(50))
    assert [s for s in stamps if s >= 1000] == list(range(1000, 1050))


def test_buffered_sends_share_a_file_and_keep_their_order(folder: Path) -> None:
    writer = SpoolWriter(linger_s=60, most=4)  # only a full buffer (or flush) writes here
    for n in range(10):
        writer.send(folder, GROUPS if n % 2 else ["dashboard"], [row(n)])
    assert len(frame_files(folder)) == 2  # two full buffers; two sends still pending
    writer.flush()
    assert len(frame_files(folder)) == 3
    taken = take(folder)
    assert [b.frames[0]["data"]["ts"] for b in taken.batches] == [f"t{n}" for n in range(10)]
    assert [b.groups for b in taken.batches][:2] == [("dashboard",), GROUPS]


def test_a_buffered_send_is_written_after_the_linger_alone(folder: Path) -> None:
    writer = SpoolWriter(linger_s=0.05)
    writer.send(folder, GROUPS, [row(0)])
    writer.send(folder, GROUPS, [row(1)])
    assert frame_files(folder) == []
    deadline = time.monotonic() + 5
    while not frame_files(folder):
        assert time.monotonic() < deadline, "the linger timer never wrote the file"
        time.sleep(0.01)
    assert [b.frames[0]["data"]["ts"] for b in take(folder).batches] == ["t0", "t1"]


def test_a_process_that_exits_right_after_a_send_still_writes_it(folder: Path) -> None:
    # The linger timer is a non-daemon thread: the interpreter waits for it at exit.
    script = (
        "import sys; from pathlib import Path\n"
        "from kirocrew_site.realtime.core.spool import SpoolWriter\n"
        "SpoolWriter(linger_s=0.3).send(Path(sys.argv[1]), ['dashboard'], "
        "[{'type': 'row', 'data': {'key': 's', 'ts': 't9', 'role': 'user'}}])\n"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", script, str(folder)], cwd=root, check=True, timeout=30)
    assert [b.frames[0]["data"]["ts"] for b in take(folder).batches] == ["t9"]


def test_a_take_is_bounded_and_says_more_is_left(folder: Path) -> None:
    writer = SpoolWriter()
    for n in range(5):
        writer.write(folder, [(GROUPS, [row(n)])])
    first = take(folder, limit=3)
    assert ([b.frames[0]["data"]["ts"] for b in first.batches], first.more) == (
        ["t0", "t1", "t2"],
        True,
    )
    second = take(folder, limit=3)
    assert ([b.frames[0]["data"]["ts"] for b in second.batches], second.more) == (
        ["t3", "t4"],
        False,
    )


def test_stale_files_are_dropped_unread(folder: Path) -> None:
    writer = SpoolWriter()
    old = writer.write(folder, [(GROUPS, [row(0)])])
    writer.write(folder, [(GROUPS, [row(1)])])
    past = time.time() - STALE_S - 5
    os.utime(old, (past, past))
    taken = take(folder)
    assert [b.frames[0]["data"]["ts"] for b in taken.batches] == ["t1"]
    assert taken.stale == 1
    assert frame_files(folder) == []


def test_a_temporary_file_is_left_to_its_writer_until_stale(folder: Path) -> None:
    tmp = folder / ".tmp-99-1"
    tmp.write_text('{"groups": ["dashboard"], "frames": []}')
    assert take(folder).batches == []
    assert tmp.exists()
    past = time.time() - STALE_S - 5
    os.utime(tmp, (past, past))
    take(folder)
    assert not tmp.exists()


def doc(*sends: Any, **extra: Any) -> bytes:
    return json.dumps({"sends": list(sends), **extra}).encode()


def one(groups: Any = ("dashboard",), frames: Any = None, **extra: Any) -> dict[str, Any]:
    return {"groups": list(groups), "frames": [row(0)] if frames is None else frames, **extra}


HOSTILE = {
    "not json": b"{nope",
    "not utf-8": b"\xff\xfe{}",
    "deep nest": b"[" * 60_000 + b"]" * 60_000,
    "a list": b"[]",
    "extra key": doc(one(), x=1),
    "no sends": doc(),
    "too many sends": doc(*[one()] * 257),
    "send not a dict": doc("dashboard"),
    "extra key in a send": doc(one(x=1)),
    "one bad send of two": doc(one(), one(groups=["admin"])),
    "unknown group": doc(one(groups=["dashboard", "admin"])),
    "group not a string": doc(one(groups=[7])),
    "no groups": doc(one(groups=[])),
    "frame not a dict": doc(one(frames=["row"])),
    "unknown type": doc(one(frames=[{"type": "x"}])),
    "too many frames": doc(one(frames=[row(0)] * 65)),
    "too large": doc(one(), pad="x" * (MAX_FILE_BYTES + 10)),
}


@pytest.mark.parametrize("why", sorted(HOSTILE))
def test_a_malformed_file_is_deleted_and_reported_and_the_rest_still_sent(
    folder: Path, why: str
) -> None:
    writer = SpoolWriter()
    writer.write(folder, [(GROUPS, [row(0)])])
    bad = writer.write(folder, [(GROUPS, [row(1)])])
    bad.write_bytes(HOSTILE[why])
    writer.write(folder, [(GROUPS, [row(2)])])
    taken = take(folder)
    assert [b.frames[0]["data"]["ts"] for b in taken.batches] == ["t0", "t2"]
    assert [name for name, _ in taken.malformed] == [bad.name]
    assert frame_files(folder) == []


def test_odd_names_and_non_files_are_deleted_never_followed(folder: Path, tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    (folder / "00000000000000000001-1-1.json").symlink_to(target)
    (folder / "notes.txt").write_text("hi")
    (folder / "00000000000000000002-1-1.json").mkdir()
    taken = take(folder)
    assert sorted(name for name, _ in taken.malformed) == [
        "00000000000000000001-1-1.json",
        "00000000000000000002-1-1.json",
        "notes.txt",
    ]
    assert target.read_text() == "keep me"
    assert os.listdir(folder) == []


def test_the_heartbeat_is_fresh_only_while_touched_and_dropped_only_by_its_relay(
    folder: Path,
) -> None:
    now = time.time()
    assert not heartbeat_fresh(folder, now)  # no relay ever: writers send locally
    heartbeat_touch(folder, "token-a")
    assert heartbeat_fresh(folder, time.time())
    assert stat.S_IMODE((folder / HEARTBEAT).stat().st_mode) == 0o600
    assert not heartbeat_fresh(folder, time.time() + FRESH_S + 1)
    heartbeat_touch(folder, "token-b")  # a second touch keeps the first relay's token
    heartbeat_drop(folder, "token-b")
    assert (folder / HEARTBEAT).exists()
    heartbeat_drop(folder, "token-a")
    assert not (folder / HEARTBEAT).exists()
    assert take(folder).batches == []  # the heartbeat is never taken as a frame file
