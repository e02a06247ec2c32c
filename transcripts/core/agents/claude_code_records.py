"""What both Claude Code converters share: the record-level rules the fused path
(``claude_code_fast``) and the general path (``claude_code``) apply alike."""

from __future__ import annotations

import re
from typing import Any

import orjson

from .common import (
    CALL_CHARS,
    DROPPED,
    compact_json,
    digest,
    digest_bytes,
    head_tail,
    provenance_value,
)

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


def is_wrapper(text: str) -> bool:
    return text.lstrip().lower().startswith(WRAPPERS)


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


def provenance(rec: dict[str, Any], state: dict[str, Any]) -> None:
    """The first non-empty value of each field wins (every record carries them again)."""
    prov = state["prov"]
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
    if name == "Bash" and isinstance(data.get("command"), str):
        return head_tail(data["command"], CALL_CHARS // 2, CALL_CHARS // 2)
    if name in SUBAGENT_TOOLS and isinstance(data.get("prompt"), str):
        kind = data.get("subagent_type")
        what = data.get("description")
        head = f"{name} ({kind})" if isinstance(kind, str) and kind else name
        if isinstance(what, str) and what.strip():
            head += f": {what.strip()}"
        return head_tail(f"{head}\n\n{data['prompt']}", CALL_CHARS // 2, CALL_CHARS // 2)
    path = data.get("file_path") or data.get("notebook_path") or data.get("path")
    if isinstance(path, str) and name in ("Edit", "Write", "MultiEdit", "NotebookEdit", "Read"):
        return f"{name} {path}"
    return head_tail(f"{name} {compact_json(data)}", CALL_CHARS // 2, CALL_CHARS // 2)


def duplicate(state: dict[str, Any], message_id: Any, block: dict[str, Any]) -> bool:
    """A streaming snapshot repeating a block already taken (same message id, same block).

    The state keeps digests of the message id and of the mark, never their text: it is
    written beside the store without write-boundary redaction."""
    if not isinstance(message_id, str):
        return False
    seen: dict[str, list[str]] = state["seen"]
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


def nothing_taken(dupes: int, thinking: int) -> str:
    """The bucket of an assistant record none of whose blocks became a row."""
    if dupes:
        return f"{DROPPED}:duplicate"
    return f"{DROPPED}:thinking" if thinking else f"{DROPPED}:empty"
