"""Codex CLI rollout records (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) → rows.

Facts: /work/shared/reference/agent-formats.md §2. User, assistant and reasoning text is
written twice (``response_item`` and ``event_msg``); one layer is read per kind: the person
from ``event_msg user_message``, the assistant from ``response_item message``.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import orjson

from .common import (
    DROPPED,
    FOREIGN,
    UNKNOWN,
    ConvState,
    Step,
    as_text,
    call_row,
    called_tool,
    compact_json,
    exit_code_in,
    head_tail,
    label,
    provenance_value,
    result_row,
    row,
    source_ts,
)

# User-role text that is context the CLI injects, not the person.
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions for",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<additional_context>",
    "another language model started to solve this problem",
)
SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "container.exec", "local_shell"})
EVENT_DUPLICATES = frozenset({"agent_message", "context_compacted", "exec_command_end"})
EVENT_BOOKKEEPING = frozenset({"token_count", "task_started"})
ITEM_BOOKKEEPING = frozenset({"ghost_snapshot", "compaction"})


def _command(args: dict[str, Any]) -> str | None:
    """The shell command of a shell-like call: argv (``bash -lc X`` → X) or a string."""
    value = args.get("command", args.get("cmd"))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[0].endswith("sh") and value[1] in ("-c", "-lc"):
            return str(value[2])
        return " ".join(value)
    return str(value) if isinstance(value, str) else None


_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)


def _patch_of(name: str, args: Any) -> str | None:
    """The patch text of an ``apply_patch`` call (its own tool, its ``input``, or the
    argv ``["apply_patch", patch]`` of a shell call), else None."""
    if isinstance(args, dict):
        command = args.get("command", args.get("cmd"))
        if isinstance(command, list) and len(command) == 2 and command[0] == "apply_patch":
            args = command[1]
        elif name == "apply_patch":
            args = args.get("input", args.get("patch"))
    if name != "apply_patch" and not (isinstance(args, str) and args.startswith("*** Begin")):
        return None
    return args if isinstance(args, str) and "*** Begin Patch" in args[:200] else None


def _patched(patch: str) -> str:
    """The files a patch touches, as its row's first line says them."""
    files = [f"{verb.lower()} {path.strip()}" for verb, path in _PATCH_FILE.findall(patch)]
    if not files:
        return "(no file named)"
    shown = ", ".join(files[:5])
    return shown + (f" and {len(files) - 5} more" if len(files) > 5 else "")


def _call(payload: dict[str, Any], state: ConvState, ts: Any) -> Step:
    kind = payload.get("type")
    name = as_text(payload.get("name") or ("local_shell" if kind == "local_shell_call" else kind))
    args: Any = payload.get("arguments", payload.get("input", payload.get("action")))
    if isinstance(args, str) and kind == "function_call":
        with contextlib.suppress(orjson.JSONDecodeError):  # else the string as it is
            args = orjson.loads(args)
    text = _command(args) if isinstance(args, dict) and name in SHELL_TOOLS else None
    patch = _patch_of(name, args) if text is None or text.startswith("apply_patch") else None
    if patch is not None:
        text = f"apply_patch {_patched(patch)}\n\n{patch}"
    if text is None:
        shown = args if isinstance(args, str) else compact_json(args)
        text = f"{name} {shown}"
    call_id = payload.get("call_id") or payload.get("id")
    return Step([call_row(state, name, call_id, head_tail(text), ts)])


def _output(payload: dict[str, Any], state: ConvState, ts: Any) -> Step:
    call_id = payload.get("call_id")
    tool = called_tool(state, call_id)
    output = payload.get("output")
    code: int | None = None
    if isinstance(output, dict):  # some builds write {content, success}
        text = as_text(output.get("content") or "")
    else:
        text = output if isinstance(output, str) else compact_json(output)
    if text.startswith("{"):
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and "output" in doc:
            meta = doc.get("metadata")
            if isinstance(meta, dict) and type(meta.get("exit_code")) is int:
                code = meta["exit_code"]  # orjson reads integers within 64 bits only
            text = as_text(doc["output"])
    if code is None:
        code = exit_code_in(text)
    if code is not None and "Process running" in text[:400]:
        code = None  # the real code comes in a later write_stdin output
    return Step([result_row(text, tool, code, code not in (None, 0), call_id, ts)])


def _message(payload: dict[str, Any], state: ConvState, ts: Any) -> Step:
    role = payload.get("role")
    if role != "assistant":  # user: read from event_msg; developer: instructions
        return Step(bucket=f"{DROPPED}:{'duplicate_layer' if role == 'user' else 'context'}")
    parts = payload.get("content")
    texts = [
        p.get("text", "")
        for p in (parts if isinstance(parts, list) else [])
        if isinstance(p, dict) and p.get("type") in ("output_text", "text")
    ]
    text = "\n".join(t for t in texts if isinstance(t, str) and t.strip())
    if not text:
        return Step(bucket=f"{DROPPED}:empty")
    state.open = True
    return Step([row("assistant", text, source_ts=ts)])


def _close(step: Step, state: ConvState) -> Step:
    if state.open and not state.pending:
        step.turn_end = True
    state.open = False
    return step


def _event(payload: dict[str, Any], state: ConvState, ts: Any) -> Step:
    kind = payload.get("type")
    if not isinstance(kind, str):  # a list or an object would not hash in the sets below
        return Step(bucket=f"{UNKNOWN}:event_msg/{label(kind)}")
    if kind == "user_message":
        text = payload.get("message")
        if not isinstance(text, str) or not text.strip():
            return Step(bucket=f"{DROPPED}:empty")
        injected = text.lstrip().lower().startswith(CONTEXT_PREFIXES)
        if payload.get("kind") not in (None, "plain") or injected:
            return Step([row("notice", text, kind="context", source_ts=ts)])
        return _close(Step([row("user", text, source_ts=ts)]), state)
    if kind == "task_complete":
        return _close(Step(bucket=f"{DROPPED}:bookkeeping"), state)
    if kind == "turn_aborted":
        state.open = False  # not a clean end: no summary pass
        reason = as_text(payload.get("reason") or "aborted")
        return Step([row("notice", f"Turn aborted: {reason}", kind="turn_aborted", source_ts=ts)])
    if kind in ("agent_reasoning", "agent_reasoning_raw_content"):
        return Step(bucket=f"{DROPPED}:reasoning")
    if kind in EVENT_DUPLICATES:
        return Step(bucket=f"{DROPPED}:duplicate_layer")
    if kind in EVENT_BOOKKEEPING:
        return Step(bucket=f"{DROPPED}:bookkeeping")
    return Step(bucket=f"{UNKNOWN}:event_msg/{label(kind)}")


def _item(payload: dict[str, Any], state: ConvState, ts: Any) -> Step:
    kind = payload.get("type")
    if not isinstance(kind, str):  # a list or an object would not hash in the sets below
        return Step(bucket=f"{UNKNOWN}:response_item/{label(kind)}")
    if kind == "message":
        return _message(payload, state, ts)
    if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        return _call(payload, state, ts)
    if kind in ("function_call_output", "custom_tool_call_output"):
        return _output(payload, state, ts)
    if kind == "reasoning":
        return Step(bucket=f"{DROPPED}:reasoning")
    if kind in ITEM_BOOKKEEPING:
        return Step(bucket=f"{DROPPED}:bookkeeping")
    return Step(bucket=f"{UNKNOWN}:response_item/{label(kind)}")


def _meta(payload: dict[str, Any], state: ConvState) -> Step:
    prov = state.prov
    if prov.get("source_session_id"):  # a later session_meta (resume, fork): the first counts
        return Step(bucket=f"{DROPPED}:bookkeeping")
    raw_git = payload.get("git")
    git: dict[str, Any] = raw_git if isinstance(raw_git, dict) else {}
    for dst, value in (
        ("source_session_id", payload.get("id")),
        ("cwd", payload.get("cwd")),
        ("git_branch", git.get("branch")),
        ("git_commit", git.get("commit_hash")),
        ("source_version", payload.get("cli_version")),
        ("originator", payload.get("originator")),
        ("forked_from_id", payload.get("forked_from_id")),
    ):
        if isinstance(value, str) and value:
            prov[dst] = provenance_value(value)  # bounded and redacted: line 0, state
    return Step(bucket=f"{DROPPED}:line0")


def convert(rec: Any, state: ConvState) -> Step:
    """One parsed rollout line → a ``Step``; never raises on a well-formed JSON value."""
    if not isinstance(rec, dict):
        return Step(bucket=f"{UNKNOWN}:not-an-object")
    kind, payload = rec.get("type"), rec.get("payload")
    ts = source_ts(rec)
    if not isinstance(payload, dict):
        return Step(bucket=f"{FOREIGN}:{label(kind)}")
    if kind == "session_meta":
        return _meta(payload, state)
    if kind == "response_item":
        return _item(payload, state, ts)
    if kind == "event_msg":
        return _event(payload, state, ts)
    if kind == "turn_context":
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd and not state.prov.get("cwd"):
            state.prov["cwd"] = provenance_value(cwd)
        return Step(bucket=f"{DROPPED}:bookkeeping")
    if kind == "compacted":
        text = payload.get("message") if isinstance(payload.get("message"), str) else ""
        return Step(
            [row("notice", text or "Conversation compacted", kind="compacted", source_ts=ts)]
        )
    return Step(bucket=f"{UNKNOWN}:{label(kind)}")
