"""Hostile sources for the agent importers: replaced, rewritten, shrunk or regrown between
runs, a state file lost, records appended while a run commits, long torn lines.

Real files under ``tmp_path``, the management command through Django (the stop-20 attack
pass; hostile names and folders are in ``test_import_hostile_files_names.py``). A test
marked ``xfail(strict=True)`` is a hole found and not closed yet (its reason says which);
the others guard what held, or a hole since closed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.agents import source
from transcripts.core.store import TranscriptStore

from .import_attack_helpers import (
    SID,
    bulk_tree,
    contents,
    jl,
    project_dir,
    prompt,
    reply,
    run,
)

pytestmark = pytest.mark.django_db


def _rewrite_in_place(path: Path, text: str) -> None:
    """Truncate and write anew through the same inode (as ``> file`` in a shell does)."""
    ino = path.stat().st_ino
    with path.open("r+") as fp:
        fp.truncate(0)
        fp.write(text)
    assert path.stat().st_ino == ino


def test_a_source_truncated_and_regrown_past_the_offset_is_not_read_mid_stream(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """A hole closed: the bytes before the old offset are not those its state digested
    (``test_import_fingerprint.py``), so it is reported, never read from mid-line."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "old first prompt"), reply(2, "old reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    key = f"claude:{SID}"
    new = jl(
        prompt(1, "NEW first prompt " + "x" * 200),
        reply(2, "NEW reply " + "y" * 200),
        prompt(3, "NEW third prompt"),
    )
    _rewrite_in_place(path, new)
    code, out = run("--format", "claude-code", str(path))
    texts = " ".join(contents(store, key))
    reported = code == 1 and "bad" in out
    complete = "NEW first prompt" in texts and "NEW reply" in texts
    assert reported or complete, (out, texts)
    assert "bad_line" not in out  # never a record read from its middle


def test_a_source_rewritten_with_the_same_size_is_not_silently_unchanged(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """A hole closed: (dev, ino, size) equal, but the mtime moved, so the digest of the
    bytes before the offset is compared, and it differs."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "AAAA first prompt"), reply(2, "AAAA reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    size = path.stat().st_size
    _rewrite_in_place(path, jl(prompt(1, "BBBB first prompt"), reply(2, "BBBB reply")))
    assert path.stat().st_size == size
    code, out = run("-v", "2", "--format", "claude-code", str(path))
    texts = " ".join(contents(store, f"claude:{SID}"))
    assert (code == 1 and "bad" in out) or "BBBB first prompt" in texts, (out, texts)


def test_a_source_deleted_and_recreated_with_the_same_size_is_not_silently_unchanged(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """A hole closed: the reused inode number and size match, the mtime and the digest
    of the bytes before the offset do not."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "AAAA first prompt"), reply(2, "AAAA reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    ino, size = path.stat().st_ino, path.stat().st_size
    path.unlink()
    path.write_text(jl(prompt(1, "BBBB first prompt"), reply(2, "BBBB reply")))
    if path.stat().st_ino != ino:
        pytest.skip("this file system gave the new file another inode number")
    assert path.stat().st_size == size
    code, out = run("--format", "claude-code", str(path))
    texts = " ".join(contents(store, f"claude:{SID}"))
    assert (code == 1 and "bad" in out) or "BBBB first prompt" in texts, (out, texts)


def test_a_source_replaced_by_a_new_inode_is_reported_and_left_alone(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """What held: a different inode at the path (an editor's save, a rotation) is bad, not
    re-imported, and the store's session is left as it was."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "first prompt"), reply(2, "first reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    before = store.path(f"claude:{SID}").read_bytes()
    other = path.with_name("tmp.new")
    other.write_text(jl(prompt(1, "other prompt"), reply(2, "other reply"), prompt(3, "more")))
    keep = path.with_name("keep.old")
    os.link(path, keep)  # holds the old inode, so the new file cannot reuse its number
    os.replace(other, path)
    code, out = run("--format", "claude-code", str(path))
    assert code == 1
    assert "a different file now has this path" in out
    assert store.path(f"claude:{SID}").read_bytes() == before


def test_a_shrunk_source_is_reported_then_regrowth_is_judged_by_its_offset(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """What held: a shrink seen by a run is reported bad and not re-imported."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "first prompt"), reply(2, "first reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    before = store.path(f"claude:{SID}").read_bytes()
    _rewrite_in_place(path, jl(prompt(1, "short")))
    code, out = run("--format", "claude-code", str(path))
    assert code == 1
    assert "shrank" in out
    assert store.path(f"claude:{SID}").read_bytes() == before


def test_a_lost_state_file_never_duplicates_the_session(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "only once"), reply(2, "reply once")))
    assert run("--format", "claude-code", str(path))[0] == 0
    for state in (store.root / ".agent-imports").glob("*.json"):
        state.unlink()  # "a cache": the person clears it, or a backup restores without it
    code, out = run("--format", "claude-code", str(path))
    assert code == 1
    assert "import state is lost" in out, out
    assert contents(store, f"claude:{SID}").count("only once") == 1


def test_lost_state_files_of_many_sources_never_duplicate_them(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """A run of many new sources (the workers read them) whose keys are in the store
    reports each as above: nothing appended twice, nothing lost."""
    src, sids = bulk_tree(tmp_path)
    assert run("--format", "claude-code", str(src))[0] == 0
    for state in (store.root / ".agent-imports").glob("*.json"):
        state.unlink()
    code, out = run("--format", "claude-code", str(src))
    assert code == 1
    assert out.count("import state is lost") == len(sids), out
    for sid in sids:
        assert contents(store, f"claude:{sid}").count(f"hello {sid}") == 1


@pytest.mark.parametrize("block", [1, 2, 3, 5, 8, 64])
def test_complete_lines_across_block_boundaries_and_torn_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Every (offset at a line start, end) of a file of short, empty and many-block lines
    with a torn tail gives the whole lines in it and the offset just past each, as a
    plain split does, whatever the block size."""
    monkeypatch.setattr(source, "BLOCK", block)
    data = b"ab\n\n" + b"c" * 40 + b"\nd\n" + b"e" * 17 + b"\n" + b"torn" * 9
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    fd = os.open(path, os.O_RDONLY)
    try:
        for offset in starts:
            for end in range(offset, len(data) + 1):
                want, at = [], offset
                while (nl := data.find(b"\n", at, end)) >= 0:
                    want.append((data[at:nl], nl + 1))
                    at = nl + 1
                assert list(source.complete_lines(fd, offset, end)) == want, (offset, end)
    finally:
        os.close(fd)


def test_a_torn_line_over_many_blocks_lands_once_when_completed(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record torn across many blocks waits, whole, through runs that each add to it,
    and lands once when its newline comes (its speed: bench/bench_torn_line.py)."""
    monkeypatch.setattr(source, "BLOCK", 64)
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    record = json.dumps(prompt(2, "long " + "x" * 2000)) + "\n"
    path.write_text(jl(prompt(1, "hello")) + record[:700])
    assert run("--format", "claude-code", str(path))[0] == 0
    for part in (record[700:1500], record[1500:-1]):
        with path.open("a") as fp:
            fp.write(part)  # still no newline: the next run reads it all again
        assert run("--format", "claude-code", str(path))[0] == 0
        assert contents(store, f"claude:{SID}") == ["hello"]
    with path.open("a") as fp:
        fp.write("\n" + jl(reply(3, "after")))
    code, out = run("--format", "claude-code", str(path))
    assert code == 0, out
    assert "bad_line" not in out
    assert contents(store, f"claude:{SID}") == ["hello", "long " + "x" * 2000, "after"]


def test_records_appended_while_new_sessions_are_written_land_once_under_follow(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What held: a record appended after a worker read a file (while the importer
    writes its session) lands on the next poll, exactly once; a torn line appended then
    and completed later lands once too."""
    from transcripts.services import agent_import

    src, sids = bulk_tree(tmp_path)
    real_create = agent_import._create
    commits: list[int] = []

    def appending_create(item: Any, *args: Any) -> Any:
        commits.append(1)
        sid = item.path.stem
        with item.path.open("a") as fp:
            fp.write(jl(prompt(3, f"late {sid}", sid)))
            fp.write(json.dumps(reply(4, f"torn {sid}", sid))[:30])
        return real_create(item, *args)

    monkeypatch.setattr(agent_import, "_create", appending_create)
    code, out = run(
        "--format", "claude-code", "--follow", "--polls", "2", "--interval", "0.01", str(src)
    )
    assert code == 0, out
    assert commits
    assert sum(commits) == len(sids)
    for sid in sids:
        path = src / f"{sid}.jsonl"
        text = path.read_text()
        with path.open("a") as fp:
            fp.write(json.dumps(reply(4, f"torn {sid}", sid))[30:] + "\n")
        assert text.count(f"late {sid}") == 1
    assert run("--format", "claude-code", str(src))[0] == 0
    assert run("--format", "claude-code", str(src))[0] == 0
    for sid in sids:
        texts = contents(store, f"claude:{sid}")
        assert texts.count(f"late {sid}") == 1, texts
        assert texts.count(f"torn {sid}") == 1, texts
        assert texts.count(f"hello {sid}") == 1, texts
