"""The agent importers' source fingerprint: every state holds the source's ``mtime_ns``
and a digest of up to 4 KiB before its offset (``fingerprint.tail_digest``, both paths).

A stat that matches (device, inode, size at the offset, mtime) is unchanged without an
open; one that moved opens the source and compares the digest: a mismatch is "a
different file now has this path", a match reads on. Real files, the management command.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.agents.source import TAIL_BYTES
from transcripts.core.store import TranscriptStore
from transcripts.services.agent_import import state_path

from .import_attack_helpers import SID, bulk_tree, contents, jl, project_dir, prompt, reply, run

pytestmark = pytest.mark.django_db

# Paths opened while a test watches (None: not watching). An audit hook, not a wrapper of
# one module's open function: the "open" event is raised by every open of the
# interpreter (``os.open``, ``open``, ``io.open``, pathlib), whichever module or name
# calls it, so no path of the importer can open a source unseen. atime was no option
# (relatime and noatime mounts do not update it). Hooks cannot be removed: one per
# process, idle unless a test sets the list.
_opened: list[str] | None = None
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], (str, bytes, Path)):
        _opened.append(os.path.realpath(os.fsdecode(args[0])))


@pytest.fixture
def opened() -> Callable[[Callable[[], Any]], list[str]]:
    """``watch(fn)``: run ``fn`` and return every path it opened."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True

    def watch(fn: Callable[[], Any]) -> list[str]:
        global _opened
        _opened = []
        try:
            fn()
            return _opened
        finally:
            _opened = None

    return watch


def _state(path: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(state_path(path).read_bytes())
    return value


def _tail(path: Path, offset: int) -> str:
    data = path.read_bytes()
    return hashlib.sha256(data[max(0, offset - TAIL_BYTES) : offset]).hexdigest()[:32]


def _touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_an_unchanged_re_import_opens_no_source_file(
    tmp_path: Path, store: TranscriptStore, opened: Callable[[Callable[[], Any]], list[str]]
) -> None:
    src, sids = bulk_tree(tmp_path)
    assert run("--format", "claude-code", str(src))[0] == 0  # the bulk path's states
    grown = src / f"{sids[0]}.jsonl"
    with grown.open("a") as fp:
        fp.write(jl(prompt(3, "more", sids[0])))
    assert run("--format", "claude-code", str(src))[0] == 0  # and a per-file one
    sources = {os.path.realpath(p) for p in src.glob("*.jsonl")}
    seen = opened(lambda: run("--format", "claude-code", str(src)))
    assert seen, "the hook sees the run's own opens (state files)"
    assert sources.isdisjoint(seen), sorted(sources & set(seen))
    # The instrument: a moved mtime opens that source, and only it; same bytes, so it is
    # unchanged and its state takes the new mtime, and the next run opens nothing again.
    touched = src / f"{sids[1]}.jsonl"
    _touch(touched)
    seen = opened(lambda: run("--format", "claude-code", str(src)))
    assert sources & set(seen) == {os.path.realpath(touched)}
    assert _state(touched)["mtime_ns"] == touched.stat().st_mtime_ns
    seen = opened(lambda: run("--format", "claude-code", str(src)))
    assert sources.isdisjoint(seen)


def test_every_state_holds_the_fingerprint_of_the_bytes_before_its_offset(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "first " + "x" * 5000), reply(2, "reply")) + '{"torn')
    assert run("--format", "claude-code", str(path))[0] == 0
    state = _state(path)
    assert state["offset"] > TAIL_BYTES  # a torn tail waits: the offset is before it
    assert state["tail"] == _tail(path, state["offset"])
    assert state["mtime_ns"] == path.stat().st_mtime_ns
    with path.open("a") as fp:  # the torn line completed, one more record: read on
        fp.write(' ": 1}\n' + jl(prompt(3, "third")))
    code, out = run("--format", "claude-code", str(path))
    assert code == 0, out
    assert contents(store, f"claude:{SID}")[-1] == "third"
    state = _state(path)
    assert state["offset"] == path.stat().st_size
    assert state["tail"] == _tail(path, state["offset"])


def _rewrite(path: Path, text: str) -> None:
    with path.open("r+") as fp:  # the same inode, truncated and written anew
        fp.truncate(0)
        fp.write(text)


def _recreate(path: Path, text: str) -> None:
    path.unlink()
    path.write_text(text)


@pytest.mark.parametrize(
    "change",
    [
        lambda p: _rewrite(p, jl(prompt(1, "BBBB first prompt"), reply(2, "BBBB reply"))),
        lambda p: _recreate(p, jl(prompt(1, "BBBB first prompt"), reply(2, "BBBB reply"))),
        lambda p: _rewrite(p, jl(prompt(1, "BBBB " + "z" * 300), reply(2, "BBBB reply"))),
    ],
    ids=["rewritten-same-size", "re-created-same-size", "truncated-and-regrown"],
)
def test_other_bytes_before_the_offset_are_a_different_file_and_left_alone(
    tmp_path: Path, store: TranscriptStore, change: Callable[[Path], None]
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "AAAA first prompt"), reply(2, "AAAA reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    before, state = store.path(f"claude:{SID}").read_bytes(), _state(path)
    change(path)
    for _ in range(2):  # reported on every run, as a new inode is; nothing appended
        code, out = run("--format", "claude-code", str(path))
        assert code == 1
        assert "a different file now has this path" in out, out
        assert store.path(f"claude:{SID}").read_bytes() == before
        assert _state(path) == state


def test_a_state_from_before_fingerprints_keeps_its_behaviour_and_gains_one(
    tmp_path: Path, store: TranscriptStore
) -> None:
    folder = project_dir(tmp_path)
    still, grows = folder / f"{SID}.jsonl", folder / "5f0c8a4e-2b1d-4c3e-9a7f-000000000002.jsonl"
    grows_key = f"claude:{grows.stem}"
    still.write_text(jl(prompt(1, "still"), reply(2, "still reply")))
    grows.write_text(jl(prompt(1, "grows", grows.stem), reply(2, "grows reply", grows.stem)))
    for path in (still, grows):
        assert run("--format", "claude-code", str(path))[0] == 0
        old = {k: v for k, v in _state(path).items() if k not in ("mtime_ns", "tail")}
        state_path(path).write_text(json.dumps(old))  # as this importer wrote it before
    with grows.open("a") as fp:
        fp.write(jl(prompt(3, "after the upgrade", grows.stem)))
    before = store.path(f"claude:{SID}").read_bytes()
    code, out = run("--format", "claude-code", str(folder))
    assert code == 0, out
    assert store.path(f"claude:{SID}").read_bytes() == before  # unchanged, as before
    assert contents(store, grows_key) == ["grows", "grows reply", "after the upgrade"]
    for path in (still, grows):  # both gained the fingerprint, of the same bytes
        state = _state(path)
        assert state["offset"] == path.stat().st_size
        assert state["mtime_ns"] == path.stat().st_mtime_ns
        assert state["tail"] == _tail(path, state["offset"])
    assert run("--format", "claude-code", str(folder))[0] == 0
    assert contents(store, grows_key).count("after the upgrade") == 1


def _far_edit_case(tmp_path: Path, store: TranscriptStore) -> tuple[Path, bytes]:
    """An imported source whose first record lies more than ``TAIL_BYTES`` before the
    offset (beyond the tail digest); then that record edited in place, size unchanged."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "AAAA first prompt"), reply(2, "long reply " + "r" * 6000)))
    assert run("--format", "claude-code", str(path))[0] == 0
    assert path.read_bytes().index(b"AAAA") < path.stat().st_size - TAIL_BYTES
    before = store.path(f"claude:{SID}").read_bytes()
    with path.open("r+b") as fp:  # the same inode and size; the write moves the mtime
        fp.seek(path.read_bytes().index(b"AAAA"))
        fp.write(b"BBBB")
    _touch(path)  # past any coarse clock tick
    return path, before


def test_a_same_size_edit_anywhere_before_the_offset_is_a_different_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """Size unchanged, mtime moved: the state's CRC of every byte read decides."""
    path, before = _far_edit_case(tmp_path, store)
    state = _state(path)
    for _ in range(2):
        code, out = run("--format", "claude-code", str(path))
        assert code == 1
        assert "a different file now has this path" in out, out
        assert store.path(f"claude:{SID}").read_bytes() == before
        assert _state(path) == state


def test_an_edit_before_the_tail_of_a_file_that_also_grew_is_not_detected(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """The documented limit: a grown file is judged by the 4 KiB before the old offset
    only (a follow would otherwise read every file whole on every poll). The edited
    record keeps the text first imported; the appended one is imported."""
    path, _ = _far_edit_case(tmp_path, store)
    with path.open("a") as fp:
        fp.write(jl(prompt(3, "appended after the edit")))
    code, out = run("--format", "claude-code", str(path))
    assert code == 0, out
    rows = contents(store, f"claude:{SID}")
    assert rows[0] == "AAAA first prompt"
    assert rows[-1] == "appended after the edit"
    assert not any("BBBB" in row for row in rows)
