"""The per-transcript lock: reentrant in a thread, exclusive across threads, processes and fork."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.transcripts.helpers import KEY, make_store
from transcripts.core import locking
from transcripts.core.errors import LockTimeout

PROJECT = Path(__file__).resolve().parents[2]

# A child process that tries to take the lock; exit 0 = taken, 3 = timed out.
_TRY_LOCK = """
import sys
from transcripts.core import locking
from transcripts.core.errors import LockTimeout
try:
    with locking.hold(sys.argv[1], timeout=float(sys.argv[2])):
        pass
except LockTimeout:
    sys.exit(3)
"""


def _try_lock_in_another_process(lock_path: Path, timeout: float) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _TRY_LOCK, str(lock_path), str(timeout)],
        cwd=PROJECT,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode in (0, 3), proc.stderr.decode()
    return proc.returncode


@pytest.mark.timeout(10)
def test_hold_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    lock = str(tmp_path / "s.jsonl.lock")
    with (
        locking.hold(lock, timeout=1),
        locking.hold(lock, timeout=1),
        locking.hold(lock, timeout=1),
    ):
        pass
    with locking.hold(lock, timeout=1):  # fully released: taken again at once
        pass


@pytest.mark.timeout(10)
def test_store_operations_nest_inside_a_held_lock(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_bytes=400, keep_lines=2, lock_timeout=1)
    with store.locked(KEY):
        first = store.append_row(KEY, "user", "q").ts[0]
        store.append_revision(KEY, first, {"cls": "x"})
        store.update_metadata(KEY, {"title": "T"})
        for i in range(10):
            store.append_row(KEY, "assistant", f"a{i} " + "x" * 50)  # rotates inside
        store.rotate(KEY, force=True)
        stamps = [r["ts"] for r in store.read_file(KEY).rows]
        store.rewind(KEY, stamps[0])
    assert len(store.read_session(KEY).rows) > 1


@pytest.mark.timeout(20)
def test_another_thread_waits_for_the_lock(tmp_path: Path) -> None:
    lock = str(tmp_path / "s.jsonl.lock")
    outcome: list[str] = []

    def contender(timeout: float) -> None:
        try:
            with locking.hold(lock, timeout=timeout):
                outcome.append("taken")
        except LockTimeout:
            outcome.append("timeout")

    with locking.hold(lock):
        t = threading.Thread(target=contender, args=(0.2,))
        t.start()
        t.join()
    assert outcome == ["timeout"]
    t = threading.Thread(target=contender, args=(5,))
    t.start()
    t.join()
    assert outcome == ["timeout", "taken"]


@pytest.mark.timeout(60)
def test_a_second_process_cannot_take_the_lock_while_it_is_held(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "q")
    lock = store.lock_path(KEY)
    with store.locked(KEY):
        assert _try_lock_in_another_process(lock, 0.3) == 3
        with store.locked(KEY):  # re-entry does not release the flock
            pass
        assert _try_lock_in_another_process(lock, 0.3) == 3
    assert _try_lock_in_another_process(lock, 5) == 0


@pytest.mark.timeout(60)
def test_the_lock_survives_the_data_file_being_replaced(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "q")
    with store.locked(KEY):
        store.update_metadata(KEY, {"title": "T"})  # replaces the transcript's inode
        assert _try_lock_in_another_process(store.lock_path(KEY), 0.3) == 3


@pytest.mark.timeout(30)
def test_a_forked_child_does_not_inherit_the_held_lock(tmp_path: Path) -> None:
    lock = str(tmp_path / "s.jsonl.lock")
    to_parent_r, to_parent_w = os.pipe()
    to_child_r, to_child_w = os.pipe()
    with locking.hold(lock):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 99
            try:
                os.close(to_parent_r)
                os.close(to_child_w)
                try:
                    with locking.hold(lock, timeout=0.3):
                        os.write(to_parent_w, b"taken-while-held")
                except LockTimeout:
                    os.write(to_parent_w, b"excluded")
                os.read(to_child_r, 1)  # wait until the parent released
                with locking.hold(lock, timeout=5):
                    code = 0
            except BaseException:
                code = 98
            finally:
                os._exit(code)
        os.close(to_parent_w)
        os.close(to_child_r)
        first = os.read(to_parent_r, 64)
    os.write(to_child_w, b"go")
    _, status = os.waitpid(pid, 0)
    os.close(to_parent_r)
    os.close(to_child_w)
    assert first == b"excluded"
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.timeout(30)
def test_a_forked_child_can_write_once_the_parent_releases(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "from parent")
    r, w = os.pipe()
    with store.locked(KEY):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 99
            try:
                os.close(w)
                os.read(r, 1)
                store.append_row(KEY, "assistant", "from child")
                code = 0
            except BaseException:
                code = 98
            finally:
                os._exit(code)
        os.close(r)
        store.append_row(KEY, "user", "parent, still holding")
    os.write(w, b"go")
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    contents = [row["content"] for row in store.read_session(KEY).rows]
    assert contents == ["from parent", "parent, still holding", "from child"]
