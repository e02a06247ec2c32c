"""Hostile files and folders for the agent importers: names, races, replaced and regrown sources, lost state.

Real files under ``tmp_path``, the management command through Django (the stop-20 attack
pass). A test marked ``xfail(strict=True)`` is a hole found and not closed yet (its reason
says which); the others guard what held, or a hole since closed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.store import TranscriptStore
from transcripts.models import Session

from .import_attack_helpers import (
    CODEX_ID,
    SID,
    all_store_bytes,
    codex_assistant,
    codex_meta,
    codex_user,
    contents,
    jl,
    project_dir,
    prompt,
    reply,
    run,
)

pytestmark = pytest.mark.django_db


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a Codex id of 300 chars makes a store file name over NAME_MAX; "
    "OSError ENAMETOOLONG escapes the command as a traceback",
)
def test_a_codex_session_id_too_long_for_a_file_name_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / "rollout-2026-11-30T11-00-00-y.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(jl(codex_meta(sid="a" * 300), codex_user("go"), codex_assistant("ok")))
    code, out = run("--format", "codex", str(path))  # an OSError here fails the test
    assert code in (0, 1)
    assert "bad" in out or "Imported 1" in out


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a 250-byte Claude file name (legal) becomes claude_<stem>.jsonl, "
    "over NAME_MAX; OSError escapes as a traceback",
)
def test_a_claude_file_name_near_name_max_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / ("s" * 248 + ".jsonl")  # 254 bytes: a legal name
    path.write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    code, _out = run("--format", "claude-code", str(path))
    assert code in (0, 1)


def _rewrite_in_place(path: Path, text: str) -> None:
    """Truncate and write anew through the same inode (as ``> file`` in a shell does)."""
    ino = path.stat().st_ino
    with path.open("r+") as fp:
        fp.truncate(0)
        fp.write(text)
    assert path.stat().st_ino == ino


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a source truncated and regrown past the old offset between runs "
    "is read from the old offset: the new file's head is lost, its tail joins the old session",
)
def test_a_source_truncated_and_regrown_past_the_offset_is_not_read_mid_stream(
    tmp_path: Path, store: TranscriptStore
) -> None:
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


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a source rewritten in place with the same size is judged "
    "unchanged from (dev, ino, size) alone: its new records are never imported, silently",
)
def test_a_source_rewritten_with_the_same_size_is_not_silently_unchanged(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "AAAA first prompt"), reply(2, "AAAA reply")))
    assert run("--format", "claude-code", str(path))[0] == 0
    size = path.stat().st_size
    _rewrite_in_place(path, jl(prompt(1, "BBBB first prompt"), reply(2, "BBBB reply")))
    assert path.stat().st_size == size
    code, out = run("-v", "2", "--format", "claude-code", str(path))
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


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a source deleted and re-created (new file, same size) gets the "
    "freed inode number back; judged by (dev, ino, size) it is silently unchanged",
)
def test_a_source_deleted_and_recreated_with_the_same_size_is_not_silently_unchanged(
    tmp_path: Path, store: TranscriptStore
) -> None:
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


def test_auto_on_a_folder_mixing_all_three_formats(tmp_path: Path, store: TranscriptStore) -> None:
    """What held: each file goes to its own converter (this project's own format to the
    ordinary import); nothing is bad, a re-run changes nothing."""
    src = tmp_path / "mixed"
    src.mkdir()
    (src / f"{SID}.jsonl").write_text(jl(prompt(1, "claude prompt"), reply(2, "claude reply")))
    (src / f"rollout-{CODEX_ID}.jsonl").write_text(
        jl(codex_meta(), codex_user("codex prompt"), codex_assistant("codex reply"))
    )
    kiro = {"_type": "metadata", "created_at": "2026-11-30T10:00:00+00:00", "key": "kiro1"}
    row = {"role": "user", "content": "kiro prompt", "ts": "2026-11-30T10:00:01+00:00"}
    (src / "kiro1.jsonl").write_text(jl(kiro, row))
    code, out = run("--format", "auto", str(src))
    assert code == 0, out
    assert {"claude prompt", "claude reply"} <= set(contents(store, f"claude:{SID}"))
    assert {"codex prompt", "codex reply"} <= set(contents(store, f"codex:{CODEX_ID}"))
    assert store.exists("kiro1")
    before = all_store_bytes(store)
    assert run("--format", "auto", str(src))[0] == 0
    assert all_store_bytes(store) == before


def test_importing_the_stores_own_folder_into_itself_changes_nothing(
    tmp_path: Path, store: TranscriptStore
) -> None:
    src = project_dir(tmp_path)
    (src / f"{SID}.jsonl").write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    assert run("--format", "claude-code", str(src))[0] == 0
    before = all_store_bytes(store)
    count = Session.objects.count()
    code, out = run("-v", "2", "--format", "auto", str(store.root))
    assert code in (0, 1), out
    code, out = run("-v", "2", "--format", "claude-code", str(store.root))
    assert code in (0, 1), out
    assert all_store_bytes(store) == before
    assert Session.objects.count() == count


def test_a_symlink_loop_a_linked_folder_and_a_folder_named_jsonl(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """What held: a loop of links, a folder that is itself a link and a directory named
    like a session neither hang nor raise; the link is reported, never followed."""
    real = project_dir(tmp_path)
    (real / f"{SID}.jsonl").write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    (real / "loop").symlink_to(real)  # a link to its own folder
    (real / "a.jsonl").symlink_to(real / "b.jsonl")
    (real / "b.jsonl").symlink_to(real / "a.jsonl")
    (real / "dir.jsonl").mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    code, out = run("--format", "claude-code", str(linked))
    assert code == 1, out
    assert "link" in out.lower(), out
    assert not store.exists(f"claude:{SID}")
    code, out = run("--format", "claude-code", str(real))
    assert code == 1, out
    assert store.exists(f"claude:{SID}")
    assert "a.jsonl: bad" in out
    assert "b.jsonl: bad" in out


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a file removed between the folder listing and its lstat "
    "(agent_sources.walk) raises FileNotFoundError out of the command",
)
def test_a_file_removed_while_the_folder_is_walked_is_no_traceback(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race made certain: the real ``os.walk`` lists the folder, then the file goes
    (as Claude Code's own cleanup of old sessions does) before ``walk`` lstats it."""
    src = project_dir(tmp_path)
    gone = src / "0-gone.jsonl"
    gone.write_text(jl(prompt(1, "short-lived"), reply(2, "bye")))
    (src / f"{SID}.jsonl").write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    real_walk = os.walk

    def racing_walk(*args: Any, **kwargs: Any) -> Any:
        for root, dirs, files in real_walk(*args, **kwargs):
            if gone.exists():
                gone.unlink()
            yield root, dirs, files

    monkeypatch.setattr(os, "walk", racing_walk)  # the walk in agent_sources uses it
    code, _out = run("--format", "claude-code", str(src))
    assert code in (0, 1)
    assert store.exists(f"claude:{SID}")


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a file name that is not UTF-8 (legal on Linux) makes the state "
    "file's sha256(path.encode()) raise UnicodeEncodeError: the whole command crashes",
)
def test_a_file_name_that_is_not_utf8_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    src = project_dir(tmp_path)
    (src / f"{SID}.jsonl").write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    name = os.path.join(os.fsencode(src), b"bad-\xff-name.jsonl")
    fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, jl(prompt(1, "other"), reply(2, "reply")).encode())
    os.close(fd)
    code, _out = run("--format", "claude-code", str(src))  # a traceback fails the test
    assert code in (0, 1)
    assert store.exists(f"claude:{SID}")  # the good file next to it is imported


def test_the_size_limit_is_inclusive_on_both_paths(
    tmp_path: Path, store: TranscriptStore, settings: Any
) -> None:
    """What held: a file of exactly KIROCREW_IMPORT_MAX_BYTES imports, one byte more is
    bad, on the per-file path (one file) and the bulk path (8+ new files) alike."""
    src = project_dir(tmp_path)
    sids = [f"5f0c8a4e-2b1d-4c3e-9a7f-{n:012d}" for n in range(10)]
    for sid in sids:
        (src / f"{sid}.jsonl").write_text(jl(prompt(1, "hello", sid), reply(2, "hi", sid)))
    size = (src / f"{sids[0]}.jsonl").stat().st_size
    with (src / f"{sids[1]}.jsonl").open("a") as fp:
        fp.write("\n")  # one byte over
    settings.KIROCREW_IMPORT_MAX_BYTES = size
    code, out = run("--format", "claude-code", str(src))
    assert code == 1
    assert "Imported 9, unchanged 0, bad 1" in out
    assert not store.exists(f"claude:{sids[1]}")
    assert all(store.exists(f"claude:{sid}") for sid in sids if sid != sids[1])


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: complete_lines rebuilds pending+block and rescans it per 4 MiB "
    "block: a long torn line costs O(n^2) (512 MiB ~ 80 s) on every run and --follow poll",
)
def test_a_long_torn_line_costs_time_linear_in_its_length(
    tmp_path: Path, store: TranscriptStore
) -> None:
    import time

    path = project_dir(tmp_path) / f"{SID}.jsonl"
    head = json.dumps(prompt(1, "hello")) + "\n"
    with path.open("w") as fp:
        fp.write(head)
        fp.write('{"type": "user", "message": {"content": "' + "x" * (112 << 20))  # torn
    assert run("--format", "claude-code", str(path))[0] == 0
    with path.open("a") as fp:
        fp.write("y")  # one more byte of the same torn line: the next run reads it again
    started = time.perf_counter()
    code, out = run("--format", "claude-code", str(path))
    took = time.perf_counter() - started
    assert code == 0, out
    # Reading 112 MiB once is ~0.1 s here; the rebuilt prefix makes it ~4 s.
    assert took < 1.5, took


def _bulk_tree(tmp_path: Path, count: int = 9) -> tuple[Path, list[str]]:
    src = project_dir(tmp_path)
    sids = [f"5f0c8a4e-2b1d-4c3e-9a7f-{n:012d}" for n in range(count)]
    for sid in sids:
        (src / f"{sid}.jsonl").write_text(
            jl(prompt(1, f"hello {sid}", sid), reply(2, f"hi {sid}", sid))
        )
    return src, sids


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: on the bulk path too, a key too long for a file name raises "
    "OSError out of _commit's store.exists (pathlib ignores only ENOENT-like errors)",
)
def test_a_long_name_among_many_new_files_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    src, sids = _bulk_tree(tmp_path)
    (src / ("s" * 248 + ".jsonl")).write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    code, out = run("--format", "claude-code", str(src))
    assert code == 1, out
    assert all(store.exists(f"claude:{sid}") for sid in sids)


def test_records_appended_while_a_bulk_import_commits_land_once_under_follow(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What held: a record appended after the workers read a file (while the importer
    commits their batch) lands on the next poll, exactly once; a torn line appended then
    and completed later lands once too."""
    from transcripts.services import agent_import_bulk

    src, sids = _bulk_tree(tmp_path)
    real_commit = agent_import_bulk._commit
    commits: list[int] = []

    def appending_commit(batch: list[Any], *args: Any) -> Any:
        commits.append(len(batch))
        for item in batch:
            sid = item.path.stem
            with item.path.open("a") as fp:
                fp.write(jl(prompt(3, f"late {sid}", sid)))
                fp.write(json.dumps(reply(4, f"torn {sid}", sid))[:30])
        return real_commit(batch, *args)

    monkeypatch.setattr(agent_import_bulk, "_commit", appending_commit)
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


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: with its state file gone, a source whose session exists (same "
    "source_path) is re-read from offset 0 and every record is appended a second time",
)
def test_a_lost_state_file_never_duplicates_the_session(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "only once"), reply(2, "reply once")))
    assert run("--format", "claude-code", str(path))[0] == 0
    for state in (store.root / ".agent-imports").glob("*.json"):
        state.unlink()  # "a cache": the person clears it, or a backup restores without it
    run("--format", "claude-code", str(path))
    assert contents(store, f"claude:{SID}").count("only once") == 1
