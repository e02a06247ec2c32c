"""Claude Code session records (``~/.claude/projects/<dir>/<sessionId>.jsonl``) → rows.

Facts: /work/shared/reference/agent-formats.md §1. The state (``ConvState``) is stored
next to the byte offset, so an incremental import resumes mid-session.
"""

from __future__ import annotations

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
    clean_text,
    compact_json,
    digest,
    digest_bytes,
    exit_code_in,
    head_tail,
    label,
    provenance_value,
    result_row,
    row,
    source_ts,
)

BOOKKEEPING = frozenset(
    {
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "custom-title",
        "ai-title",
        "last-prompt",
        "tag",
    }
)
SYSTEM_NOTICES = frozenset({"compact_boundary", "api_error", "local_command", "informational"})
SYSTEM_BOOKKEEPING = frozenset({"turn_duration", "stop_hook_summary"})
# The session's own names, most deliberate first: the person's (/rename), the agent's.
OWN_TITLES = ("custom-title", "ai-title")
TITLE_SOURCE_CHARS = 400  # what the state keeps of one (a title shows 80)

# ``type:user`` text that is not the person: slash commands and their output, hooks,
# interruptions, reminders (shown as notices, never counted as a turn).
WRAPPERS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "[request interrupted by user",
    "<task-notification>",
    "<system-reminder>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
)
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})  # Claude Code's subagent tool (renamed)
SEEN_MESSAGES = 16  # message ids remembered for duplicate snapshots
MARK_BYTES = 2048  # of a block's JSON, what tells a repeated block


_COMMAND = re.compile(r"\s*<command-name>\s*(/?[^<\s]*)\s*</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def command_shown(text: str) -> str:
    """A slash command as the person typed it (``/clear``, ``/model opus``) from Claude
    Code's ``<command-name>`` wrapper; any other wrapper text as it is."""
    found = _COMMAND.match(text)
    if found is None or not found.group(1):
        return text
    name = found.group(1) if found.group(1).startswith("/") else "/" + found.group(1)
    args = _COMMAND_ARGS.search(text)
    extra = " ".join(args.group(1).split()) if args else ""
    return f"{name} {extra}" if extra else name


PROVENANCE = (
    ("sessionId", "source_session_id"),
    ("cwd", "cwd"),
    ("gitBranch", "git_branch"),
    ("version", "source_version"),
    ("agentId", "agent_id"),
)


def provenance(rec: dict[str, Any], state: ConvState) -> None:
    """The first non-empty value of each field wins (every record carries them again)."""
    prov = state.prov
    if len(prov) == len(PROVENANCE):  # all taken: the usual case after the first lines
        return
    if len(prov) == len(PROVENANCE) - 1 and "agent_id" not in prov and "agentId" not in rec:
        return  # a main thread: all but the agent id taken, and none offered here
    for src, dst in PROVENANCE:
        value = rec.get(src)
        if isinstance(value, str) and value and dst not in prov:
            prov[dst] = provenance_value(value)  # bounded and redacted: line 0, state


def call_text(name: str, data: Any) -> str:
    """The command for Bash, ``<Tool> <path>`` for file tools, a subagent's task as text
    (its description, then its prompt), else the tool and its input."""
    data = data if isinstance(data, dict) else {}
    path = data.get("file_path") or data.get("notebook_path") or data.get("path")
    if name == "Bash" and isinstance(data.get("command"), str):
        text = data["command"]
    elif name in SUBAGENT_TOOLS and isinstance(data.get("prompt"), str):
        kind = data.get("subagent_type")
        what = data.get("description")
        text = f"{name} ({kind})" if isinstance(kind, str) and kind else name
        if isinstance(what, str) and what.strip():
            text += f": {what.strip()}"
        text += f"\n\n{data['prompt']}"
    elif isinstance(path, str) and name in ("Edit", "Write", "MultiEdit", "NotebookEdit", "Read"):
        return f"{name} {path}"
    else:
        text = f"{name} {compact_json(data)}"
    return head_tail(text)


def duplicate(state: ConvState, message_id: Any, block: dict[str, Any]) -> bool:
    """A streaming snapshot repeating a block already taken (same message id, same block).

    The state keeps digests of the message id and of the mark, never their text: it is
    written beside the store without write-boundary redaction."""
    if not isinstance(message_id, str):
        return False
    seen = state.seen
    # The first MARK_BYTES of the block's compact JSON tell a repeated block; only their
    # digest is kept.
    try:
        mark = digest_bytes(orjson.dumps(block)[:MARK_BYTES])
    except TypeError:
        mark = digest(compact_json(block)[:MARK_BYTES])
    marks = seen.setdefault(digest(message_id), [])
    if mark in marks:
        return True
    marks.append(mark)
    while len(seen) > SEEN_MESSAGES:
        seen.pop(next(iter(seen)))
    return False


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _blocks(content: Any) -> list[Any] | None:
    """A message's content blocks (a string is one text block); None when it has none."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else None


def _message(rec: dict[str, Any]) -> dict[str, Any]:
    """The record's message object; a hostile one (a string, a list) reads as empty."""
    message = rec.get("message")
    return message if isinstance(message, dict) else {}


def _user(rec: dict[str, Any], state: ConvState, ts: Any) -> Step:
    if rec.get("isCompactSummary"):
        text = _text_of(_message(rec).get("content"))
        return Step([row("notice", text, kind="compact_summary", source_ts=ts)])
    if rec.get("isMeta"):
        return Step(bucket=f"{DROPPED}:meta")
    blocks = _blocks(_message(rec).get("content"))
    if blocks is None:
        return Step(bucket=f"{DROPPED}:empty")
    step = Step()
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            text = block["text"]
            if text.lstrip().lower().startswith(WRAPPERS):
                shown = command_shown(text)
                step.rows.append(row("notice", shown, kind="command", source_ts=ts))
            else:
                if state.open:  # the previous turn never said end_turn (#20222)
                    step.turn_end = True
                    state.open = False
                step.rows.append(row("user", text, source_ts=ts))
        elif kind == "tool_result":
            step.rows.append(_result(block, rec, state, ts))
    if not step.rows:
        step.bucket = f"{DROPPED}:empty"
    return step


def _result(
    block: dict[str, Any], rec: dict[str, Any], state: ConvState, ts: Any
) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    tool = called_tool(state, call_id)
    text = _text_of(block.get("content"))
    is_error = bool(block.get("is_error"))
    code = exit_code_in(text) if is_error else None
    extra = rec.get("toolUseResult")
    interrupted = isinstance(extra, dict) and bool(extra.get("interrupted"))
    if tool == "Bash" and not is_error and not interrupted:
        code = 0  # Claude Code writes no code on success; a failure says "Exit code N"
    return result_row(text, tool, code, is_error, call_id, ts)


def _assistant(rec: dict[str, Any], state: ConvState, ts: Any) -> Step:
    message = _message(rec)
    if rec.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
        return Step(
            [row("notice", _text_of(message.get("content")), kind="api_error", source_ts=ts)]
        )
    blocks = _blocks(message.get("content"))
    if blocks is None:
        return Step(bucket=f"{DROPPED}:empty")
    step, called, thinking, dupes = Step(), False, 0, 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if duplicate(state, message.get("id"), block):
            dupes += 1
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            step.rows.append(row("assistant", block["text"], source_ts=ts))
        elif kind == "tool_use":
            name = as_text(block.get("name") or "")
            called = True
            text = call_text(name, block.get("input"))
            step.rows.append(call_row(state, name, block.get("id"), text, ts))
        elif kind in ("thinking", "redacted_thinking"):
            thinking += 1  # dropped by rule: private reasoning, often long, never evidence
    if step.rows:
        state.open = True
    if message.get("stop_reason") == "end_turn" and not called and not state.pending and state.open:
        step.turn_end = True
        state.open = False
    if not step.rows:  # none of its blocks became a row
        step.bucket = f"{DROPPED}:" + (
            "duplicate" if dupes else "thinking" if thinking else "empty"
        )
    return step


def _system(rec: dict[str, Any], state: ConvState, ts: Any) -> Step:
    sub = rec.get("subtype")
    if not isinstance(sub, str):  # a list or an object would not hash in the sets below
        return Step(bucket=f"{UNKNOWN}:system/{label(sub)}")
    if sub in SYSTEM_BOOKKEEPING:
        step = Step(bucket=f"{DROPPED}:bookkeeping")
        if sub == "turn_duration" and state.open and not state.pending:
            step.turn_end = True  # follows a turn whose assistant record had no stop_reason
            state.open = False
        return step
    if sub in SYSTEM_NOTICES:
        text = rec.get("content") if isinstance(rec.get("content"), str) else ""
        if sub == "compact_boundary" and not text:
            text = "Conversation compacted"
        return Step([row("notice", text or str(sub), kind=str(sub), source_ts=ts)])
    return Step(bucket=f"{UNKNOWN}:system/{label(sub)}")


def convert(rec: Any, state: ConvState) -> Step:
    """One parsed Claude Code line → a ``Step``; never raises on a well-formed JSON value."""
    if not isinstance(rec, dict):
        return Step(bucket=f"{UNKNOWN}:not-an-object")
    kind = rec.get("type")
    if "payload" in rec and "sessionId" not in rec:
        return Step(bucket=f"{FOREIGN}:{label(kind)}")
    provenance(rec, state)
    if not isinstance(kind, str):  # a list or an object would not hash in the sets below
        return Step(bucket=f"{UNKNOWN}:{label(kind)}")
    ts = source_ts(rec)
    if kind in ("user", "assistant") and bool(rec.get("isSidechain")) != state.sidechain:
        return Step(bucket=f"{DROPPED}:other_thread")  # subagents live in their own session
    if kind == "user":
        return _user(rec, state, ts)
    if kind == "assistant":
        return _assistant(rec, state, ts)
    if kind == "system":
        return _system(rec, state, ts)
    if kind == "summary":
        text = rec.get("summary") if isinstance(rec.get("summary"), str) else ""
        return (
            Step([row("notice", text, kind="summary")]) if text else Step(bucket=f"{DROPPED}:empty")
        )
    if kind == "pr-link":
        url = rec.get("prUrl") or rec.get("url") or compact_json(rec.get("pr") or "")
        return Step([row("notice", f"PR: {as_text(url)}", kind="pr-link", source_ts=ts)])
    if kind in OWN_TITLES:  # the session's name, for its title (the last one wins)
        value = rec.get("customTitle") or rec.get("aiTitle") or rec.get("title")
        if isinstance(value, str) and value.strip():
            state.titles[kind] = clean_text(value, TITLE_SOURCE_CHARS)
    if kind in BOOKKEEPING:
        return Step(bucket=f"{DROPPED}:bookkeeping")
    return Step(bucket=f"{UNKNOWN}:{label(kind)}")
