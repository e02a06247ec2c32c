"""What both converters share: the step they return, the tally, rows and their bounds."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from ..codec import MAX_LINE_BYTES
from ..content import MAX_TEXT_CHARS
from ..redaction import redact_text

# Tool output (and a call's text) kept per row: the head says what ran, the tail how it ended.
HEAD_CHARS = 2000
TAIL_CHARS = 2000
# A meta string (tool name, call id, timestamp) and a provenance value: real ones are
# short; a hostile one must leave the row, and line 0, far inside the store's line cap.
META_CHARS = 1024
PROV_CHARS = 4096  # a path may be up to PATH_MAX
# One text's JSON within the line cap, 2 MiB left for the row's meta, ts and keys and
# what redaction may add (a tag replaces a secret of about its own length).
TEXT_BYTES = MAX_LINE_BYTES - 2 * 1024 * 1024
JSON_CHAR_BYTES = 6  # the most one character takes in JSON ("\u0001")
CUT = "\n…[cut]"
REDACTED_TAG = "[REDACTED: "  # what every redaction tag starts with
LABEL_CHARS = 64  # an unknown record type in a tally bucket
DIGEST_CHARS = 32  # of a sha256 hex digest: what the state keeps of a call id or a mark

IMPORTED = "imported"  # the record became at least one row
DROPPED = "dropped"  # dropped by a documented rule: "dropped:<rule>"
UNKNOWN = "unknown"  # a record type this reader does not know: "unknown:<type>"
FOREIGN = "foreign"  # a record of another format: the file changed format mid-way


@dataclass(slots=True)
class ConvState:
    """A converter's memory between records and runs."""

    # Calls awaiting their result: the call id's digest → the tool's name.
    pending: dict[str, str] = field(default_factory=dict)
    open: bool = False  # a turn has begun and not ended yet
    prov: dict[str, str] = field(default_factory=dict)  # line 0's provenance: first wins
    # Claude Code only: a message id's digest → its blocks' marks (streaming duplicates),
    # whether the file is a subagent's (agent-*.jsonl), and the session's own titles.
    seen: dict[str, list[str]] = field(default_factory=dict)
    sidechain: bool = False
    titles: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Step:
    """One source record's outcome: rows to append, its tally bucket, a clean turn end."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    bucket: str = IMPORTED
    turn_end: bool = False


def head_tail(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    cut = len(text) - HEAD_CHARS - TAIL_CHARS
    return f"{text[:HEAD_CHARS]}\n…[{cut} chars omitted]…\n{text[-TAIL_CHARS:]}"


def as_text(value: Any) -> str:
    """``str(value)`` that never raises: a source value nested ~1000 deep (orjson reads up
    to 1024 levels) exceeds ``repr``'s recursion limit, and a raise would stall the file."""
    if type(value) is str:
        return value
    try:
        return str(value)
    except RecursionError:
        return "…[nested too deep]"


def compact_json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson's JSONEncodeError too: deeper than it writes, say
        return as_text(value)


def clean_text(text: str, cap: int = MAX_TEXT_CHARS) -> str:
    """Within the content rule: U+0000 (binary tool output) → U+FFFD, at most ``cap``
    characters and ``TEXT_BYTES`` of JSON (3 M "€" are 9 MB: past the line cap). A rejected
    row would reject its batch on every run, so the text is bent and the row kept."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if len(text) > cap:
        text = text[: cap - 40] + CUT
    if len(text) * JSON_CHAR_BYTES > TEXT_BYTES:  # only a text this long can outgrow it
        text = _fit_bytes(text)
    return text


def _json_size(text: str) -> int:
    try:
        return len(orjson.dumps(text))
    except TypeError:  # a lone surrogate: the widest guess, so the loop below ends
        return len(text) * JSON_CHAR_BYTES


def _fit_bytes(text: str) -> str:
    size = _json_size(text)
    if size <= TEXT_BYTES:
        return text
    keep = len(text) * (TEXT_BYTES - 64) // size
    while True:  # the first guess fits unless the wide characters crowd the head
        cut = text[:keep] + CUT
        if _json_size(cut) <= TEXT_BYTES:
            return cut
        keep = keep * 9 // 10


def meta_value(value: Any) -> Any:
    """A source value that becomes a row's ``source_ts`` or ``call_id``: a string (cut to
    ``META_CHARS``) or a plain number (orjson reads integers within 64 bits only); anything
    else is dropped (None): a nested array there broke the store's depth rule."""
    kind = type(value)
    if kind is str:
        return clean_text(value, META_CHARS)
    if kind is int or kind is float:
        return value
    return None


@lru_cache(maxsize=1024)
def redacted(text: str) -> str:
    """``redact_text``'s text, for what is kept outside rows (provenance, pending tool
    names, tally labels): those values repeat (a project's cwd, "Bash"), so each is
    judged once per process."""
    return redact_text(text)[0]


def provenance_value(value: str) -> str:
    """A provenance value as line 0, the state and the session's title/project keep it:
    they bypass the store's write-boundary redaction, so it is applied here."""
    return redacted(clean_text(value, PROV_CHARS))


def label(value: Any) -> str:
    """A source's record type inside a tally bucket (``unknown:<type>``): bounded and
    redacted, since the tally is kept in the state file and printed."""
    return redacted(clean_text(as_text(value), META_CHARS))[:LABEL_CHARS]


@lru_cache(maxsize=256)  # a message id is digested once per block, a call id twice
def digest(text: str) -> str:
    """What the state keeps of a call id or a duplicate mark: matching needs equality
    only, and the raw text may hold a secret the state file would keep unredacted."""
    return digest_bytes(text.encode("utf-8", "surrogatepass"))


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def source_ts(rec: dict[str, Any]) -> Any:
    """A record's ``timestamp`` as its rows' ``meta.source_ts`` (``meta_value``)."""
    return meta_value(rec.get("timestamp"))


def call_row(state: ConvState, name: str, call_id: Any, text: str, ts: Any) -> dict[str, Any]:
    """A tool call's row; its id (digested) awaits the result that will name the tool."""
    if isinstance(call_id, str):
        state.pending[digest(call_id)] = redacted(clean_text(name, META_CHARS))
    return row("tool_call", text, tool=name, call_id=meta_value(call_id), source_ts=ts)


def called_tool(state: ConvState, call_id: Any) -> str | None:
    """The tool whose call a result answers; the call leaves ``pending``. A state written
    before digests keeps the raw id: it is still answered (and removed) by it, so its
    turn can end."""
    if not isinstance(call_id, str):
        return None
    tool = state.pending.pop(digest(call_id), None)
    if tool is None and state.pending:
        tool = state.pending.pop(call_id, None)
    return tool


def result_row(
    text: str, tool: str | None, code: int | None, is_error: bool, call_id: Any, ts: Any
) -> dict[str, Any]:
    """A tool result's row: the output's head and tail, the tool it answers, its code."""
    return row(
        "tool_result",
        head_tail(text),
        tool=tool or "",
        exit_code=code,
        is_error=is_error,
        call_id=meta_value(call_id),
        source_ts=ts,
    )


def row(role: str, content: str, **meta: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": clean_text(content)}
    kept = {
        k: clean_text(v, META_CHARS) if isinstance(v, str) else v
        for k, v in meta.items()
        if v is not None
    }
    if kept:
        out["meta"] = kept
    return out


_EXIT = re.compile(r"(?:Exit code:?|Process exited with code)\s*(-?\d+)")
_EXIT_MIN, _EXIT_MAX = -(2**63), 2**63 - 1


def exit_code_in(text: str) -> int | None:
    """``Exit code N`` / ``Exit code: N`` / ``Process exited with code N`` in the head.

    A number past a signed 64-bit int is no exit code (None): the store refuses integers
    past 64 bits, and its refusal would stall the file on every run."""
    match = _EXIT.search(text[:400])
    if match is None:
        return None
    digits = match.group(1)
    if len(digits) > 20:  # int() of thousands of digits is slow, or refused
        return None
    code = int(digits)
    return code if _EXIT_MIN <= code <= _EXIT_MAX else None


class Tally(Counter[str]):
    """Records per bucket; ``total()`` equals the lines read (bad JSON lines included)."""
