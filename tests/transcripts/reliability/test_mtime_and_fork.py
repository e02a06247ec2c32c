"""D18-like (strict sig when the kernel's mtime does not move) and D19b (fork with the lock held)."""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

import pytest

from transcripts.core import locking
from transcripts.core import store as store_module
from transcripts.core.errors import LockTimeout
from transcripts.core.store import TranscriptStore

from .procs import LineReader

KEY = "dashboard:sig"
FAR_FUTURE_NS = 4_102_444_800 * 10**9  # 2100-01-01: every kernel stamp is earlier


def _store_at_far_future(tmp_path: Path) -> tuple[TranscriptStore, Path]:
    store = TranscriptStore(tmp_path, fsync="never")
    store.create(KEY, {"title": "sig"})
    path = store.path(KEY)
    # A filesystem whose mtime does not advance: whatever the kernel stamps on the next
    # write is not past the value the writer saw before it (here: it is even earlier).
    os.utime(path, ns=(FAR_FUTURE_NS, FAR_FUTURE_NS))
    return store, path


def test_sig_strictly_advances_when_the_kernel_mtime_does_not(tmp_path: Path) -> None:
    store, path = _store_at_far_future(tmp_path)
    sigs = [path.stat().st_mtime_ns]
    for n in range(5):
        appended = store.append_row(KEY, "user", f"row {n}")
        sigs.append(path.stat().st_mtime_ns)
        assert appended.identity.sig == sigs[-1]
    assert sigs == [FAR_FUTURE_NS + i for i in range(6)]  # previous + 1 ns, every time
    assert all(b > a for a, b in itertools.pairwise(sigs))


def test_control_without_the_strict_sig_fix_the_sig_does_not_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Teeth for the test above: the same appends with the writer's utime disabled."""
    store, path = _store_at_far_future(tmp_path)
    before = store.sig(KEY)
    monkeypatch.setattr(store_module.os, "utime", lambda *_a, **_k: None)  # type: ignore[attr-defined]
    store.append_row(KEY, "user", "row")
    monkeypatch.undo()
    after = path.stat().st_mtime_ns
    assert before is not None
    assert not after > before  # a stale summary keyed on the sig would read as fresh


def _fork_while_held(lock_path: str, *, from_holder: bool) -> list[str]:
    """Fork (from the holding thread or another one) while this process holds the lock.

    The child first tries the lock for 0.3 s (must time out: the parent holds it), waits
    for the parent to release it, then takes it (re-entrantly too) and exits.
    """
    report_read, report_write = os.pipe()
    go_read, go_write = os.pipe()
    pid: list[int] = []

    def fork() -> None:
        child = os.fork()
        if child:
            pid.append(child)
            return
        code = 1
        try:
            os.close(report_read)
            os.close(go_write)
            try:
                with locking.hold(lock_path, timeout=0.3):
                    os.write(report_write, b"GOT-IT-WHILE-PARENT-HELD-IT\n")
            except LockTimeout:
                os.write(report_write, b"BUSY\n")
            os.read(go_read, 1)  # EOF once the parent has released the lock
            with locking.hold(lock_path, timeout=10), locking.hold(lock_path, timeout=1):
                os.write(report_write, b"ACQUIRED\n")
            code = 0
        finally:
            os._exit(code)

    reader = LineReader(report_read)
    open_fds = {report_read, report_write, go_read, go_write}

    def close(fd: int) -> None:
        if fd in open_fds:
            open_fds.discard(fd)
            os.close(fd)

    try:
        with locking.hold(lock_path):
            if from_holder:
                fork()
            else:
                thread = threading.Thread(target=fork)
                thread.start()
                thread.join(timeout=10)
            close(report_write)
            close(go_read)
            assert pid, "fork did not happen"
            lines = reader.wait_for("BUSY", timeout=10)
        close(go_write)  # released: the child may go on
        lines += reader.drain(timeout=20)
    finally:
        for fd in list(open_fds):
            close(fd)
        _reap(pid)
    return lines


def _reap(pids: list[int]) -> None:
    for child in pids:
        deadline = time.monotonic() + 20
        while True:
            done, status = os.waitpid(child, os.WNOHANG)
            if done:
                assert os.waitstatus_to_exitcode(status) == 0, f"child exit status {status}"
                break
            if time.monotonic() > deadline:
                os.kill(child, 9)
                os.waitpid(child, 0)
                raise AssertionError("forked child deadlocked on the transcript lock")
            time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("from_holder", [False, True], ids=["other-thread", "holding-thread"])
def test_fork_while_lock_held(tmp_path: Path, from_holder: bool) -> None:
    lock_path = str(tmp_path / "s.jsonl.lock")
    lines = _fork_while_held(lock_path, from_holder=from_holder)
    # Excluded while the parent held the lock (no inherited RLock/flock "ownership"),
    # then no deadlock on an inherited RLock once it was released.
    assert lines == ["BUSY", "ACQUIRED"], lines
    # And the parent can still take its own lock afterwards.
    with locking.hold(lock_path, timeout=2):
        pass
