"""The fused path for the common Claude Code records: a main-thread ``user`` or
``assistant`` record whose message is a plain dict. Same rules as ``claude_code``'s general
path, rows built at once; None hands a record to the general path, which alone decides
anything this does not know (tests compare both)."""

from __future__ import annotations

from typing import Any

from .claude_code_records import call_text, duplicate, is_wrapper, nothing_taken, provenance
from .common import (
    Step,
    clean_text,
    exit_code_in,
    head_tail,
    meta_text,
    meta_value,
    put_pending,
    take_pending,
)


def _fast_ok(rec: dict[str, Any], state: dict[str, Any]) -> dict[str, Any] | None:
    """The record's message when the fused path may take it: same thread, a dict
    message, no flag the general path treats apart. None: the general path."""
    if bool(rec.get("isSidechain")) != state["sidechain"]:
        return None
    message = rec.get("message")
    if type(message) is not dict:
        return None
    return message


def assistant_fast(rec: dict[str, Any], state: dict[str, Any]) -> Step | None:
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
    provenance(rec, state)
    ts = meta_value(rec.get("timestamp"))
    message_id = message.get("id")
    rows: list[dict[str, Any]] = []
    called, thinking, dupes = False, 0, 0
    pending = state["pending"]
    for block in blocks:
        if duplicate(state, message_id, block):
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
            put_pending(pending, call_id, name)
            called = True
            meta: dict[str, Any] = {"tool": meta_text(name), "call_id": meta_text(call_id)}
            if ts is not None:
                meta["source_ts"] = ts
            content = clean_text(call_text(name, block.get("input")))
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
        step.bucket = nothing_taken(dupes, thinking)
    return step


def user_fast(rec: dict[str, Any], state: dict[str, Any]) -> Step | None:
    message = _fast_ok(rec, state)
    if message is None or rec.get("isCompactSummary") or rec.get("isMeta"):
        return None
    content = message.get("content")
    if type(content) is str:
        if not content.strip() or is_wrapper(content):
            return None
        provenance(rec, state)
        step = Step()
        if state["open"]:  # the previous turn never said end_turn (#20222)
            step.turn_end = True
            state["open"] = False
        out: dict[str, Any] = {"role": "user", "content": clean_text(content)}
        ts = meta_value(rec.get("timestamp"))
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
    provenance(rec, state)
    ts = meta_value(rec.get("timestamp"))
    extra = rec.get("toolUseResult")
    interrupted = isinstance(extra, dict) and bool(extra.get("interrupted"))
    pending = state["pending"]
    rows: list[dict[str, Any]] = []
    for block in content:
        call_id = block["tool_use_id"]
        tool = take_pending(pending, call_id)
        text = block["content"]
        is_error = bool(block.get("is_error"))
        code = exit_code_in(text) if is_error else None
        if tool == "Bash" and not is_error and not interrupted:
            code = 0
        meta: dict[str, Any] = {"tool": meta_text(tool) if tool else ""}
        if code is not None:
            meta["exit_code"] = code
        meta["is_error"] = is_error
        meta["call_id"] = meta_text(call_id)
        if ts is not None:
            meta["source_ts"] = ts
        rows.append({"role": "tool_result", "content": clean_text(head_tail(text)), "meta": meta})
    return Step(rows)
