"""Hostile records in agent sessions: poison values that must not stall a source, and secrets that must not reach the store.

Real files under ``tmp_path``, the management command through Django (the stop-20 attack
pass). A test marked ``xfail(strict=True)`` is a hole found and not closed yet (its reason
says which); the others guard what held, or a hole since closed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from transcripts.core.store import TranscriptStore
from transcripts.models import Session

from .import_attack_helpers import (
    CODEX_ID,
    GH_TOKEN,
    SID,
    all_store_bytes,
    bash_call,
    bash_result,
    codex_assistant,
    codex_item,
    codex_meta,
    codex_user,
    contents,
    jl,
    project_dir,
    prompt,
    reply,
    run,
    store_text,
)

pytestmark = pytest.mark.django_db


def _deep(levels: int) -> Any:
    value: Any = "2026-11-30T10:00:00Z"
    for _ in range(levels):
        value = [value]
    return value


def _poisoned_then_appended(
    store: TranscriptStore, path: Path, fmt: str, key: str, later: str
) -> None:
    """The poisoned file imports (its other rows land), and a record appended after it
    lands on the next run: one record must never stall the whole source forever."""
    code, out = run("--format", fmt, str(path))
    assert code == 0, out
    assert store.exists(key), out
    with path.open("a") as fp:
        fp.write(later)
    code, out = run("--format", fmt, str(path))
    assert code == 0, out
    assert "the record appended later" in " ".join(contents(store, key))


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a tool result saying Exit code <21+ digits> makes a meta int the store refuses; the whole file is bad forever",
)
@pytest.mark.parametrize(
    "text",
    [
        "Exit code 99999999999999999999999",  # > 2**64: a number the store refuses
        "Exit code -99999999999999999999999",
    ],
)
def test_a_huge_exit_code_in_a_claude_tool_result_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore, text: str
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(
        jl(
            prompt(1, "run it"),
            bash_call(2, "toolu_1", "false"),
            bash_result(3, "toolu_1", text, True),
            reply(4, "done"),
        )
    )
    later = jl(prompt(5, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: Codex Process exited with code <huge> makes a meta int the store refuses; the file stalls forever",
)
def test_a_huge_exit_code_in_a_codex_output_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    call = {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}"}
    out = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "Process exited with code 123456789012345678901234567890",
    }
    path.write_text(jl(codex_meta(), codex_user("go"), codex_item(call), codex_item(out)))
    later = jl(codex_user("the record appended later"))
    _poisoned_then_appended(store, path, "codex", f"codex:{CODEX_ID}", later)


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a record timestamp nested >64 levels is copied into meta.source_ts; the batch is refused forever",
)
def test_a_deeply_nested_timestamp_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    bad = prompt(2, "second prompt")
    bad["timestamp"] = _deep(100)  # JSON orjson reads; deeper than the store's 64 levels
    path.write_text(jl(prompt(1, "first prompt"), bad, reply(3, "ok")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: a Codex call_id nested >64 levels is copied into meta.call_id; the batch is refused forever",
)
def test_a_deeply_nested_codex_call_id_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    call = {"type": "function_call", "name": "shell", "call_id": _deep(100), "arguments": "{}"}
    path.write_text(jl(codex_meta(), codex_user("go"), codex_item(call)))
    later = jl(codex_user("the record appended later"))
    _poisoned_then_appended(store, path, "codex", f"codex:{CODEX_ID}", later)


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: clean_text caps characters not bytes; a 3M-char non-ASCII prompt exceeds the 8 MiB line cap and stalls the file",
)
def test_a_prompt_whose_row_outgrows_the_line_cap_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """3 M euro signs: within the 4 M character cap the converter applies, but 9 MB of
    UTF-8, over the store's 8 MiB line cap: the row is refused, and with it the batch."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "first prompt"), prompt(2, "\u20ac" * 3_000_000), reply(3, "ok")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: line 0 provenance (cwd, git_branch, source_version) is written without write-boundary redaction",
)
@pytest.mark.parametrize("field", ["gitBranch", "cwd", "version"])
def test_a_secret_in_claude_provenance_never_reaches_the_store(
    tmp_path: Path, store: TranscriptStore, field: str
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    value = f"/home/ann/{GH_TOKEN}" if field == "cwd" else f"feat/{GH_TOKEN}"
    path.write_text(jl(prompt(1, "hello", **{field: value}), reply(2, "hi", **{field: value})))
    code, out = run("--format", "claude-code", str(path))
    assert code == 0, out
    assert GH_TOKEN in path.read_text()  # the source keeps it
    assert GH_TOKEN.encode() not in store_text(store)
    session = Session.objects.get(key=f"claude:{SID}")
    assert GH_TOKEN not in json.dumps([session.project, session.title])


@pytest.mark.xfail(
    strict=True, reason="stop20 attack: Codex session_meta git.branch reaches line 0 unredacted"
)
def test_a_secret_in_codex_provenance_never_reaches_the_store(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    meta = codex_meta(git={"branch": f"feat/{GH_TOKEN}", "commit_hash": "abc"})
    path.write_text(jl(meta, codex_user("go"), codex_assistant("ok")))
    code, out = run("--format", "codex", str(path))
    assert code == 0, out
    assert GH_TOKEN.encode() not in store_text(store)


@pytest.mark.parametrize("where", ["tool", "call_id", "summary", "reasoning_args"])
def test_a_secret_in_tool_names_call_ids_and_summaries_is_redacted(
    tmp_path: Path, store: TranscriptStore, where: str
) -> None:
    """What held: meta and notice rows pass the write-boundary redaction."""
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    if where == "tool":
        rec = codex_item({"type": "function_call", "name": f"x_{GH_TOKEN}", "call_id": "c"})
    elif where == "call_id":
        rec = codex_item({"type": "function_call", "name": "shell", "call_id": GH_TOKEN})
    elif where == "summary":
        rec = {"timestamp": "t", "type": "compacted", "payload": {"message": f"k={GH_TOKEN}"}}
    else:
        args = json.dumps({"token": GH_TOKEN, "command": ["echo", GH_TOKEN]})
        rec = codex_item({"type": "function_call", "name": "other", "arguments": args})
    path.write_text(jl(codex_meta(), codex_user("go"), rec, codex_assistant("ok")))
    code, out = run("--format", "codex", str(path))
    assert code == 0, out
    assert GH_TOKEN.encode() not in store_text(store)


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: the per-source state file keeps an unanswered call's tool name "
    "and the provenance unredacted under the store's .agent-imports",
)
def test_a_secret_in_a_pending_call_never_reaches_the_state_files(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    call = codex_item({"type": "function_call", "name": f"x_{GH_TOKEN}", "call_id": GH_TOKEN})
    path.write_text(jl(codex_meta(), codex_user("go"), call))  # no output yet: pending
    code, out = run("--format", "codex", str(path))
    assert code == 0, out
    assert GH_TOKEN.encode() not in store_text(store)  # the session file is clean
    assert GH_TOKEN.encode() not in all_store_bytes(store)  # and so is everything else


@pytest.mark.xfail(
    strict=True,
    reason="stop20 attack: the Codex session_meta.id becomes the key, file name and slot "
    "name as it is: a secret there is never redacted",
)
def test_a_secret_in_the_codex_session_id_never_reaches_the_store(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / "rollout-2026-11-30T11-00-00-x.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(jl(codex_meta(sid=GH_TOKEN), codex_user("go"), codex_assistant("ok")))
    code, out = run("--format", "codex", str(path))
    assert code == 0, out
    names = " ".join(str(p) for p in store.root.rglob("*"))
    assert GH_TOKEN not in names
    assert GH_TOKEN.encode() not in store_text(store)
    assert not Session.objects.filter(key__contains=GH_TOKEN).exists()
