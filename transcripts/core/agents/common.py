"""What both converters share: the step they return, the tally and the output excerpt."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..content import MAX_TEXT_CHARS

# Tool output kept per result: the head says what ran, the tail how it ended.
HEAD_CHARS = 2000
TAIL_CHARS = 2000
CALL_CHARS = 4000

IMPORTED = "imported"  # the record became at least one row
DROPPED = "dropped"  # dropped by a documented rule: "dropped:<rule>"
UNKNOWN = "unknown"  # a record type this reader does not know: "unknown:<type>"
FOREIGN = "foreign"  # a record of another format: the file changed format mid-way


@dataclass(slots=True)
class Step:
    """One source record's outcome: rows to append, its tally bucket, a clean turn end."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    bucket: str = IMPORTED
    turn_end: bool = False


def head_tail(text: str, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    if len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    return f"{text[:head]}\n…[{cut} chars omitted]…\n{text[-tail:]}"


def compact_json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def clean_text(text: str) -> str:
    """Within the content rule: U+0000 (binary tool output) → U+FFFD, at most the cap.

    A rejected row would reject its whole batch on every run, so the file would never
    move on; the converter bends the text instead and the row keeps its place.
    """
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 40] + "\n…[cut]"


def row(role: str, content: str, **meta: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": clean_text(content)}
    kept = {k: clean_text(v) if isinstance(v, str) else v for k, v in meta.items() if v is not None}
    if kept:
        out["meta"] = kept
    return out


_EXIT = re.compile(r"(?:Exit code:?|Process exited with code)\s*(-?\d+)")


def exit_code_in(text: str) -> int | None:
    """``Exit code N`` / ``Exit code: N`` / ``Process exited with code N`` in the head."""
    match = _EXIT.search(text[:400])
    return int(match.group(1)) if match else None


class Tally(Counter[str]):
    """Records per bucket; ``total`` equals the lines read (bad JSON lines included)."""

    def total_records(self) -> int:
        return sum(self.values())
