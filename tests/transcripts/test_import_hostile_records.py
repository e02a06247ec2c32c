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
    bulk_tree,
    claude,
    codex_assistant,
    codex_event,
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


@pytest.mark.parametrize("kind", [["user"], {"type": "user"}])
def test_a_record_type_that_is_a_list_or_an_object_never_stalls_a_claude_file(
    tmp_path: Path, store: TranscriptStore, kind: Any
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    odd = {**prompt(2, "odd"), "type": kind}
    path.write_text(jl(prompt(1, "run it"), odd, reply(3, "done")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


@pytest.mark.parametrize("message", ["hello", ["hello"], 5])
@pytest.mark.parametrize("kind", ["user", "assistant"])
def test_a_claude_message_that_is_not_an_object_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore, kind: str, message: Any
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    odd = claude(kind, 2, message=message)
    path.write_text(jl(prompt(1, "run it"), odd, reply(3, "done")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


@pytest.mark.parametrize("kind", [["user"], {"type": "user"}])
def test_a_file_whose_first_record_type_is_a_list_or_object_is_bad_and_the_folder_imports(
    tmp_path: Path, store: TranscriptStore, kind: Any
) -> None:
    folder = project_dir(tmp_path)
    (folder / "odd.jsonl").write_text(jl({"type": kind, "note": "not a session"}))
    (folder / f"{SID}.jsonl").write_text(jl(prompt(1, "hello"), reply(2, "hi")))
    code, out = run(str(folder))
    assert (code, store.exists(f"claude:{SID}")) == (1, True), out
    assert "odd.jsonl: bad: format not recognised" in out


@pytest.mark.parametrize("subtype", [["turn_duration"], {"a": 1}])
def test_a_claude_system_subtype_that_is_a_list_or_an_object_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore, subtype: Any
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    odd = claude("system", 2, subtype=subtype, content="x")
    path.write_text(jl(prompt(1, "run it"), odd, reply(3, "done")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


@pytest.mark.parametrize("kind", [["user_message"], {"type": "message"}])
@pytest.mark.parametrize("wrap", [codex_event, codex_item])
def test_a_payload_type_that_is_a_list_or_an_object_never_stalls_a_codex_file(
    tmp_path: Path, store: TranscriptStore, kind: Any, wrap: Any
) -> None:
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(jl(codex_meta(), codex_user("go"), wrap({"type": kind}), codex_assistant("ok")))
    later = jl(codex_user("the record appended later"))
    _poisoned_then_appended(store, path, "codex", f"codex:{CODEX_ID}", later)


def test_a_deeply_nested_timestamp_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    bad = prompt(2, "second prompt")
    bad["timestamp"] = _deep(100)  # JSON orjson reads; deeper than the store's 64 levels
    path.write_text(jl(prompt(1, "first prompt"), bad, reply(3, "ok")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


def test_a_deeply_nested_codex_call_id_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    call = {"type": "function_call", "name": "shell", "call_id": _deep(100), "arguments": "{}"}
    path.write_text(jl(codex_meta(), codex_user("go"), codex_item(call)))
    later = jl(codex_user("the record appended later"))
    _poisoned_then_appended(store, path, "codex", f"codex:{CODEX_ID}", later)


def test_a_prompt_whose_row_outgrows_the_line_cap_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """3 M euro signs: within the 4 M character cap the converter applies, but 9 MB of
    UTF-8, over the store's 8 MiB line cap: the row is refused, and with it the batch."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    path.write_text(jl(prompt(1, "first prompt"), prompt(2, "\u20ac" * 3_000_000), reply(3, "ok")))
    later = jl(prompt(4, "the record appended later"))
    _poisoned_then_appended(store, path, "claude-code", f"claude:{SID}", later)


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


def _with_deep(record: dict[str, Any], levels: int = 1000) -> str:
    """``record``'s JSON line with its ``"@deep"`` value nested ``levels`` arrays deep:
    within orjson's 1024 levels, past ``repr``'s recursion limit (json.dumps would refuse)."""
    deep = "[" * levels + '"x"' + "]" * levels
    return json.dumps(record).replace('"@deep"', deep) + "\n"


def test_a_value_nested_past_repr_depth_never_stalls_the_file(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """A tool name, an abort reason, a record type ~1000 arrays deep: ``str`` of it raised
    RecursionError in the converter, so the file failed on every run."""
    path = tmp_path / "sessions" / f"rollout-2026-11-30T11-00-00-{CODEX_ID}.jsonl"
    path.parent.mkdir(parents=True)
    call = codex_item({"type": "function_call", "name": "@deep", "call_id": "c1"})
    abort = codex_event({"type": "turn_aborted", "reason": "@deep"})
    odd = {"timestamp": "t", "type": "@deep", "payload": {}}
    head = jl(codex_meta(), codex_user("go"))
    path.write_text(head + _with_deep(call) + _with_deep(abort) + _with_deep(odd))
    later = jl(codex_user("the record appended later"))
    _poisoned_then_appended(store, path, "codex", f"codex:{CODEX_ID}", later)


def test_a_secret_in_claude_ids_and_record_types_never_reaches_the_state_files(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """The state's duplicate marks (keyed by message id), pending call ids, tool names and
    tally labels (an unknown record type) keep digests or redacted text only."""
    path = project_dir(tmp_path) / f"{SID}.jsonl"
    call = bash_call(2, GH_TOKEN, f"echo {GH_TOKEN}")  # unanswered: pending
    call["message"]["id"] = f"msg_{GH_TOKEN}"
    call["message"]["content"][0]["name"] = f"x_{GH_TOKEN}"
    odd = {"type": f"x_{GH_TOKEN}", "sessionId": SID, "timestamp": "t"}
    path.write_text(jl(prompt(1, "hello"), call, odd))
    code, out = run("-v", "2", "--format", "claude-code", str(path))
    assert code == 0, out
    assert GH_TOKEN.encode() not in all_store_bytes(store)


def test_an_older_states_raw_pending_call_is_still_answered() -> None:
    """States written before call ids were digested keep them raw: the result still finds
    its tool name (and the call leaves ``pending``, so the turn can end)."""
    from transcripts.core.agents import claude_code, codex
    from transcripts.core.agents.common import ConvState

    state = ConvState()
    state.pending["c1"] = "shell"
    out = {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0"}
    step = codex.convert(codex_item(out), state)
    assert step.rows[0]["meta"]["tool"] == "shell"
    assert not state.pending
    state = ConvState()
    state.pending["toolu_1"] = "Bash"
    step = claude_code.convert(bash_result(3, "toolu_1", "ok", False), state)
    assert step.rows[0]["meta"]["tool"] == "Bash"
    assert step.rows[0]["meta"]["exit_code"] == 0
    assert not state.pending


def test_hostile_records_in_a_bulk_import_neither_stall_nor_leak(
    tmp_path: Path, store: TranscriptStore
) -> None:
    """The bulk path (8+ new files, worker processes) converts with the same rules."""
    src, sids = bulk_tree(tmp_path)
    bad = prompt(2, "\u20ac" * 3_000_000, cwd=f"/home/ann/{GH_TOKEN}")
    bad["timestamp"] = _deep(100)
    poisoned = src / f"{SID}.jsonl"
    poisoned.write_text(
        jl(
            prompt(1, "first prompt", cwd=f"/home/ann/{GH_TOKEN}"),
            bad,
            bash_call(3, "toolu_1", "false"),
            bash_result(4, "toolu_1", "Exit code 99999999999999999999999", True),
        )
    )
    code, out = run("--format", "claude-code", str(src))
    assert code == 0, out
    assert all(store.exists(f"claude:{sid}") for sid in [*sids, SID]), out
    assert GH_TOKEN.encode() not in all_store_bytes(store)
    with poisoned.open("a") as fp:
        fp.write(jl(prompt(5, "the record appended later")))
    code, out = run("--format", "claude-code", str(src))
    assert code == 0, out
    assert "the record appended later" in " ".join(contents(store, f"claude:{SID}"))
