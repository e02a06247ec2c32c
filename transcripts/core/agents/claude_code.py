"""Claude Code session records (``~/.claude/projects/<dir>/<sessionId>.jsonl``) → rows.

Facts: /work/shared/reference/agent-formats.md §1. The state is a plain dict so an
incremental import can store it next to the byte offset and resume mid-session.
"""

from __future__ import annotations

from typing import Any

import orjson

from .common import (
    CALL_CHARS,
    DROPPED,
    FOREIGN,
    UNKNOWN,
    Step,
    clean_text,
    compact_json,
    exit_code_in,
    head_tail,
    row,
)

FORMAT = "claude-code"

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
SEEN_MESSAGES = 16  # message ids remembered for duplicate snapshots
MARK_CHARS = 512  # of a block's JSON, what tells a repeated block


def new_state(*, sidechain: bool = False) -> dict[str, Any]:
    return {"pending": {}, "open": False, "seen": {}, "sidechain": sidechain, "prov": {}}


def is_wrapper(text: str) -> bool:
    return text.lstrip().lower().startswith(WRAPPERS)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


PROVENANCE = (
    ("sessionId", "source_session_id"),
    ("cwd", "cwd"),
    ("gitBranch", "git_branch"),
    ("version", "source_version"),
    ("agentId", "agent_id"),
)


def _provenance(rec: dict[str, Any], state: dict[str, Any]) -> None:
    """The first non-empty value of each field wins (every record carries them again)."""
    prov = state["prov"]
    if len(prov) == len(PROVENANCE):  # all taken: the usual case after the first lines
        return
    if len(prov) == len(PROVENANCE) - 1 and "agent_id" not in prov and "agentId" not in rec:
        return  # a main thread: all but the agent id taken, and none offered here
    for src, dst in PROVENANCE:
        value = rec.get(src)
        if isinstance(value, str) and value and dst not in prov:
            prov[dst] = value


def _call_text(name: str, data: Any) -> str:
    """The command for Bash, ``<Tool> <path>`` for file tools, else the tool and its input."""
    data = data if isinstance(data, dict) else {}
    if name == "Bash" and isinstance(data.get("command"), str):
        return head_tail(data["command"], CALL_CHARS // 2, CALL_CHARS // 2)
    path = data.get("file_path") or data.get("notebook_path") or data.get("path")
    if isinstance(path, str) and name in ("Edit", "Write", "MultiEdit", "NotebookEdit", "Read"):
        return f"{name} {path}"
    return head_tail(f"{name} {compact_json(data)}", CALL_CHARS // 2, CALL_CHARS // 2)


def _duplicate(state: dict[str, Any], message_id: Any, block: dict[str, Any]) -> bool:
    """A streaming snapshot repeating a block already taken (same message id, same block)."""
    if not isinstance(message_id, str):
        return False
    seen: dict[str, list[str]] = state["seen"]
    # The first 512 characters of the block's compact JSON: they lie within its first
    # 2048 bytes (at most 4 per character), so only those are decoded.
    try:
        mark = orjson.dumps(block)[: 4 * MARK_CHARS].decode("utf-8", "ignore")[:MARK_CHARS]
    except TypeError:
        mark = compact_json(block)[:MARK_CHARS]
    marks = seen.setdefault(message_id, [])
    if mark in marks:
        return True
    marks.append(mark)
    while len(seen) > SEEN_MESSAGES:
        seen.pop(next(iter(seen)))
    return False


def _user(rec: dict[str, Any], state: dict[str, Any], ts: Any) -> Step:
    if rec.get("isCompactSummary"):
        text = _text_of((rec.get("message") or {}).get("content"))
        return Step([row("notice", text, kind="compact_summary", source_ts=ts)])
    if rec.get("isMeta"):
        return Step(bucket=f"{DROPPED}:meta")
    content = (rec.get("message") or {}).get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return Step(bucket=f"{DROPPED}:empty")
    step = Step()
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            text = block["text"]
            if is_wrapper(text):
                step.rows.append(row("notice", text, kind="command", source_ts=ts))
            else:
                if state["open"]:  # the previous turn never said end_turn (#20222)
                    step.turn_end = True
                    state["open"] = False
                step.rows.append(row("user", text, source_ts=ts))
        elif kind == "tool_result":
            step.rows.append(_result(block, rec, state, ts))
    if not step.rows:
        step.bucket = f"{DROPPED}:empty"
    return step


def _result(
    block: dict[str, Any], rec: dict[str, Any], state: dict[str, Any], ts: Any
) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    tool = state["pending"].pop(call_id, None) if isinstance(call_id, str) else None
    text = _text_of(block.get("content"))
    is_error = bool(block.get("is_error"))
    code = exit_code_in(text) if is_error else None
    extra = rec.get("toolUseResult")
    interrupted = isinstance(extra, dict) and bool(extra.get("interrupted"))
    if tool == "Bash" and not is_error and not interrupted:
        code = 0  # Claude Code writes no code on success; a failure says "Exit code N"
    return row(
        "tool_result",
        head_tail(text),
        tool=tool or "",
        exit_code=code,
        is_error=is_error,
        call_id=call_id,
        source_ts=ts,
    )


def _assistant(rec: dict[str, Any], state: dict[str, Any], ts: Any) -> Step:
    message = rec.get("message") or {}
    if rec.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
        return Step(
            [row("notice", _text_of(message.get("content")), kind="api_error", source_ts=ts)]
        )
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return Step(bucket=f"{DROPPED}:empty")
    step, called, thinking, dupes = Step(), False, 0, 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if _duplicate(state, message.get("id"), block):
            dupes += 1
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            step.rows.append(row("assistant", block["text"], source_ts=ts))
        elif kind == "tool_use":
            name = str(block.get("name") or "")
            call_id = block.get("id")
            if isinstance(call_id, str):
                state["pending"][call_id] = name
            called = True
            step.rows.append(
                row(
                    "tool_call",
                    _call_text(name, block.get("input")),
                    tool=name,
                    call_id=call_id,
                    source_ts=ts,
                )
            )
        elif kind in ("thinking", "redacted_thinking"):
            thinking += 1  # dropped by rule: private reasoning, often long, never evidence
    if step.rows:
        state["open"] = True
    if (
        message.get("stop_reason") == "end_turn"
        and not called
        and not state["pending"]
        and state["open"]
    ):
        step.turn_end = True
        state["open"] = False
    if not step.rows:
        step.bucket = (
            f"{DROPPED}:duplicate"
            if dupes
            else f"{DROPPED}:thinking"
            if thinking
            else f"{DROPPED}:empty"
        )
    return step


def _system(rec: dict[str, Any], state: dict[str, Any], ts: Any) -> Step:
    sub = rec.get("subtype")
    if sub in SYSTEM_BOOKKEEPING:
        step = Step(bucket=f"{DROPPED}:bookkeeping")
        if sub == "turn_duration" and state["open"] and not state["pending"]:
            step.turn_end = True  # follows a turn whose assistant record had no stop_reason
            state["open"] = False
        return step
    if sub in SYSTEM_NOTICES:
        text = rec.get("content") if isinstance(rec.get("content"), str) else ""
        if sub == "compact_boundary" and not text:
            text = "Conversation compacted"
        return Step([row("notice", text or str(sub), kind=str(sub), source_ts=ts)])
    return Step(bucket=f"{UNKNOWN}:system/{sub}")


def convert(rec: Any, state: dict[str, Any]) -> Step:
    """One parsed Claude Code line → a ``Step``; never raises on a well-formed JSON value.

    The common records (a main-thread ``user`` or ``assistant`` record whose message is a
    plain dict, with block lists or a string prompt) take a fused path: the same rules,
    rows built at once with each record's ``source_ts`` cleaned once. Anything else, and
    any block it does not know, goes to the general path (``_convert_general``), which
    alone decides those; the result is the same either way (tests compare both)."""
    if type(rec) is dict and "payload" not in rec:
        kind = rec.get("type")
        if kind == "assistant":
            step = _assistant_fast(rec, state)
            if step is not None:
                return step
        elif kind == "user":
            step = _user_fast(rec, state)
            if step is not None:
                return step
    return _convert_general(rec, state)


def _source_ts(ts: Any) -> Any:
    """``row``'s treatment of the ``source_ts`` meta value."""
    return clean_text(ts) if isinstance(ts, str) else ts


def _fast_ok(rec: dict[str, Any], state: dict[str, Any]) -> dict[str, Any] | None:
    """The record's message when the fused path may take it: same thread, a dict
    message, no flag the general path treats apart. None: the general path."""
    if bool(rec.get("isSidechain")) != state["sidechain"]:
        return None
    message = rec.get("message")
    if type(message) is not dict:
        return None
    return message


def _assistant_fast(rec: dict[str, Any], state: dict[str, Any]) -> Step | None:
    message = _fast_ok(rec, state)
    if message is None or rec.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
        return None
    blocks = message.get("content")
    if type(blocks) is not list:
        return None
    for block in blocks:  # every block of a known shape, or the general path
        if type(block) is not dict:
            return None
        kind = block.get("type")
        if kind == "text":
            if type(block.get("text")) is not str:
                return None
        elif kind == "tool_use":
            if type(block.get("name")) is not str or type(block.get("id")) is not str:
                return None
        elif kind != "thinking" and kind != "redacted_thinking":
            return None
    _provenance(rec, state)
    ts = _source_ts(rec.get("timestamp"))
    message_id = message.get("id")
    rows: list[dict[str, Any]] = []
    called, thinking, dupes = False, 0, 0
    pending = state["pending"]
    for block in blocks:
        if _duplicate(state, message_id, block):
            dupes += 1
            continue
        kind = block["type"]
        if kind == "text":
            text = block["text"]
            if text.strip():
                out: dict[str, Any] = {"role": "assistant", "content": clean_text(text)}
                if ts is not None:
                    out["meta"] = {"source_ts": ts}
                rows.append(out)
        elif kind == "tool_use":
            name = block["name"]
            call_id = block["id"]
            pending[call_id] = name
            called = True
            meta: dict[str, Any] = {"tool": clean_text(name), "call_id": clean_text(call_id)}
            if ts is not None:
                meta["source_ts"] = ts
            content = clean_text(_call_text(name, block.get("input")))
            rows.append({"role": "tool_call", "content": content, "meta": meta})
        else:
            thinking += 1
    if rows:
        state["open"] = True
    step = Step(rows)
    if message.get("stop_reason") == "end_turn" and not called and not pending and state["open"]:
        step.turn_end = True
        state["open"] = False
    if not rows:
        step.bucket = (
            f"{DROPPED}:duplicate"
            if dupes
            else f"{DROPPED}:thinking"
            if thinking
            else f"{DROPPED}:empty"
        )
    return step


def _user_fast(rec: dict[str, Any], state: dict[str, Any]) -> Step | None:
    message = _fast_ok(rec, state)
    if message is None or rec.get("isCompactSummary") or rec.get("isMeta"):
        return None
    content = message.get("content")
    if type(content) is str:
        if not content.strip() or is_wrapper(content):
            return None
        _provenance(rec, state)
        step = Step()
        if state["open"]:  # the previous turn never said end_turn (#20222)
            step.turn_end = True
            state["open"] = False
        out: dict[str, Any] = {"role": "user", "content": clean_text(content)}
        ts = _source_ts(rec.get("timestamp"))
        if ts is not None:
            out["meta"] = {"source_ts": ts}
        step.rows.append(out)
        return step
    if type(content) is not list or not content:
        return None
    for block in content:  # tool results only, each with a string id and content
        if (
            type(block) is not dict
            or block.get("type") != "tool_result"
            or type(block.get("tool_use_id")) is not str
            or type(block.get("content")) is not str
        ):
            return None
    _provenance(rec, state)
    ts = _source_ts(rec.get("timestamp"))
    extra = rec.get("toolUseResult")
    interrupted = isinstance(extra, dict) and bool(extra.get("interrupted"))
    pending = state["pending"]
    rows: list[dict[str, Any]] = []
    for block in content:
        call_id = block["tool_use_id"]
        tool = pending.pop(call_id, None)
        text = block["content"]
        is_error = bool(block.get("is_error"))
        code = exit_code_in(text) if is_error else None
        if tool == "Bash" and not is_error and not interrupted:
            code = 0
        meta: dict[str, Any] = {"tool": clean_text(tool) if tool else ""}
        if code is not None:
            meta["exit_code"] = code
        meta["is_error"] = is_error
        meta["call_id"] = clean_text(call_id)
        if ts is not None:
            meta["source_ts"] = ts
        rows.append({"role": "tool_result", "content": clean_text(head_tail(text)), "meta": meta})
    return Step(rows)


def _convert_general(rec: Any, state: dict[str, Any]) -> Step:
    """``convert`` for every record (the fused path's reference)."""
    if not isinstance(rec, dict):
        return Step(bucket=f"{UNKNOWN}:not-an-object")
    kind = rec.get("type")
    if "payload" in rec and "sessionId" not in rec:
        return Step(bucket=f"{FOREIGN}:{kind}")
    _provenance(rec, state)
    ts = rec.get("timestamp")
    if kind in ("user", "assistant") and bool(rec.get("isSidechain")) != state["sidechain"]:
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
        return Step([row("notice", f"PR: {url}", kind="pr-link", source_ts=ts)])
    if kind in BOOKKEEPING:
        return Step(bucket=f"{DROPPED}:bookkeeping")
    return Step(bucket=f"{UNKNOWN}:{kind}")
