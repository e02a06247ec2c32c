"""The unit of extraction: one kept transcript row as the summarizer sees it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolRow:
    """A tool row (``tool_call``, ``tool_result``, legacy ``tool``), redacted, excerpted."""

    kind: str  # "call", "result" or "tool" (legacy free text)
    text: str
    tool: str | None = None  # meta.tool: "bash", "edit", ...
    exit_code: int | None = None  # meta.exit_code of a result
    ts: str | None = None  # the row's own stamp: evidence links to the row that showed it


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    index: int  # 1-based position among kept rows
    role: str  # "user" or "assistant" (merged_summary rows read as assistant)
    text: str  # redacted; then user text capped at max_user_chars, assistant head/tail excerpt
    ts: str | None
    user_turn: int | None  # genuine user turn number; None for assistant and injected rows
    injected: bool = False  # automation posting under role "user"
    repeat_of: int | None = None  # verbatim resend of this earlier user turn
    truncated: bool = False
    # tool rows that followed this row, in order, up to the next kept row
    tools: tuple[ToolRow, ...] = ()
