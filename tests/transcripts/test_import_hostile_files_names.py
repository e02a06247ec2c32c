"""Hostile file names and folders for the agent importers: names too long or not UTF-8,
files gone mid-walk, links, loops, mixed formats, the store's own folder, the size limit.

Real files under ``tmp_path``, the management command through Django (the stop-20 attack
pass; the sources that change between runs are in ``test_import_hostile_files.py``). A
test marked ``xfail(strict=True)`` is a hole found and not closed yet (its reason says
which); the others guard what held, or a hole since closed.
"""

from __future__ import annotations

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
    bulk_tree,
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


def test_a_codex_session_id_too_long_for_a_file_name_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / "rollout-2026-11-30T11-00-00-y.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(jl(codex_meta(sid="a" * 300), codex_user("go"), codex_assistant("ok")))
    code, out = run("--format", "codex", str(path))  # an OSError here fails the test
    assert code == 1
    assert "too long for a file name" in out, out


def test_a_claude_file_name_near_name_max_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / ("s" * 248 + ".jsonl")  # 254 bytes: a legal name
    path.write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    code, out = run("--format", "claude-code", str(path))
    assert code == 1
    assert "too long for a file name" in out, out


def test_a_long_name_among_many_new_files_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    src, sids = bulk_tree(tmp_path)
    (src / ("s" * 248 + ".jsonl")).write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    code, out = run("--format", "claude-code", str(src))
    assert code == 1, out
    assert "too long for a file name" in out, out
    assert all(store.exists(f"claude:{sid}") for sid in sids)


def test_a_file_name_that_is_not_utf8_is_reported_not_a_traceback(
    tmp_path: Path, store: TranscriptStore
) -> None:
    src = project_dir(tmp_path)
    (src / f"{SID}.jsonl").write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    name = os.path.join(os.fsencode(src), b"bad-\xff-name.jsonl")
    fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, jl(prompt(1, "other"), reply(2, "reply")).encode())
    os.close(fd)
    code, out = run("--format", "claude-code", str(src))  # a traceback fails the test
    assert code == 1
    assert "bad-\ufffd-name.jsonl: bad: its path is not valid UTF-8" in out, out
    assert store.exists(f"claude:{SID}")  # the good file next to it is imported
    code, out = run("--format", "claude-code", os.fsdecode(name))  # named, not walked
    assert code == 1
    assert "not valid UTF-8" in out, out


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

    monkeypatch.setattr(os, "walk", racing_walk)  # the walk in agent_import uses it
    code, _out = run("--format", "claude-code", str(src))
    assert code in (0, 1)
    assert store.exists(f"claude:{SID}")


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
