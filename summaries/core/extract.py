"""Reduce transcript rows to the bounded input the summarizer reads.

Only ``role``, ``content`` and ``ts`` are ever read, plus ``meta.tool`` and
``meta.exit_code`` of tool rows. The rest of ``meta`` is most of a transcript's bytes
(14.65 MB of a 15.6 MB session in the original) and holds nothing about intent, so
ignoring it is the single largest saving, and both entry points below prove it.

Tool rows (``tool_call``, ``tool_result``, legacy ``tool``) are attached, redacted and
excerpted, to the kept row before them (``TranscriptTurn.tools``). Only the heuristic
reads them (exit codes, test summaries, commits: evidence that costs it no tokens); the
model's prompt renders role and content of user and assistant rows only, as before.

Every kept text is redacted here, user rows included (the store redacts only non-user
rows), before any backend reads it: a secret a person pasted must reach neither a model
server nor the heuristic, whose shaping (capitals, clipping) could hide it from the
final payload redaction. The whole content is redacted BEFORE it is capped or excerpted:
a cut can split a secret so that no pattern matches the half that is left.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import msgspec

from transcripts.core.codec import MAX_LINE_BYTES
from transcripts.core.reader import UTF8_BOM, parse_json_line
from transcripts.core.redaction import redact_text
from transcripts.core.user_turns import INJECTED_PREFIXES as INJECTED_PREFIXES  # re-exported
from transcripts.core.user_turns import is_injected as is_injected  # re-exported
from transcripts.core.user_turns import is_user_turn

from .transcript_turn import ToolRow, TranscriptTurn

READ_ROLES = frozenset({"user", "assistant", "merged_summary"})
TOOL_ROLES = {"tool_call": "call", "tool_result": "result", "tool": "tool"}
TOOL_EXCERPT_CHARS = 400  # head and tail: git output leads, test summaries trail
MAX_USER_CHARS = 4000
MAX_INPUT_CHARS = 40_000
KEEP_FIRST_TURNS = 3
AUTOMATION_LABEL = "[automation, not the user]"


def excerpt(content: str, keep: int) -> str:
    """Head and tail of ``content``, ``keep`` characters each, with the gap counted."""
    keep = max(0, keep)
    if len(content) <= 2 * keep:
        return content
    dropped = len(content) - 2 * keep
    # content[len - keep:] rather than content[-keep:]: keep == 0 must give "", not all.
    tail = content[len(content) - keep :]
    return f"{content[:keep]}\n[... {dropped} characters omitted ...]\n{tail}"


class _Extractor:
    """The one extraction rule, fed by both the dict path and the bytes fast path."""

    def __init__(self, assistant_excerpt_chars: int, max_user_chars: int) -> None:
        self.keep = assistant_excerpt_chars
        self.max_user = max_user_chars
        self.turns: list[TranscriptTurn] = []
        self.user_count = 0
        self.prev_norm: str | None = None
        self.prev_turn = 0
        self.tools: list[ToolRow] = []

    def _flush_tools(self) -> None:
        if self.tools and self.turns:
            self.turns[-1] = replace(self.turns[-1], tools=tuple(self.tools))
        self.tools = []

    def _feed_tool(self, kind: str, content: str, meta: object, ts: object = None) -> None:
        if not self.turns:
            return  # nothing to attach it to: no person turn has asked for anything yet
        info = meta if isinstance(meta, dict) else {}
        tool, code = info.get("tool"), info.get("exit_code")
        self.tools.append(
            ToolRow(
                kind,
                excerpt(redact_text(content)[0], TOOL_EXCERPT_CHARS),
                tool if isinstance(tool, str) else None,
                code if type(code) is int else None,
                ts if isinstance(ts, str) else None,
            )
        )

    def finish(self) -> list[TranscriptTurn]:
        self._flush_tools()
        return self.turns

    def feed(self, role: object, content: object, ts: object, meta: object = None) -> None:
        if not isinstance(role, str) or not isinstance(content, str):
            return
        if role in TOOL_ROLES:
            # an empty output is still a result: its exit code says how the call went
            # ("git checkout -- f" prints nothing)
            self._feed_tool(TOOL_ROLES[role], content, meta, ts)
            return
        if not content.strip():
            return
        if role not in READ_ROLES:
            return
        self._flush_tools()
        stamp = ts if isinstance(ts, str) else None
        index = len(self.turns) + 1
        # Redacted whole, then cut (see the module docstring). Plain prose takes the
        # redactor's fast path and comes back as the same object.
        clean = redact_text(content)[0]
        if role != "user":
            text = excerpt(clean, self.keep)
            turn = TranscriptTurn(index, "assistant", text, stamp, None, truncated=text != clean)
        elif is_injected(content):
            # Neither counted nor remembered: a resend on either side of an automation
            # row is still a resend.
            text = clean[: self.max_user]
            turn = TranscriptTurn(
                index, "user", text, stamp, None, injected=True, truncated=len(clean) > len(text)
            )
        else:
            text = clean[: self.max_user]
            self.user_count += 1
            # Compared before redaction: two different pasted tokens redact to the same
            # tag, and "use token A" then "use token B" is not a resend.
            norm = " ".join(content[: self.max_user].split())
            repeat = self.prev_turn if norm == self.prev_norm else None
            self.prev_norm, self.prev_turn = norm, self.user_count
            turn = TranscriptTurn(
                index,
                "user",
                text,
                stamp,
                self.user_count,
                repeat_of=repeat,
                truncated=len(clean) > len(text),
            )
        self.turns.append(turn)


def extract_turns(
    records: Iterable[object],
    *,
    assistant_excerpt_chars: int = 400,
    max_user_chars: int = MAX_USER_CHARS,
) -> list[TranscriptTurn]:
    """Kept user/assistant rows of folded transcript records, in order."""
    ex = _Extractor(assistant_excerpt_chars, max_user_chars)
    for rec in records:
        if isinstance(rec, dict):
            role = rec.get("role")
            meta = rec.get("meta") if isinstance(role, str) and role in TOOL_ROLES else None
            ex.feed(role, rec.get("content"), rec.get("ts"), meta)
    return ex.finish()


class _MetaView(msgspec.Struct):
    tool: Any = None
    exit_code: Any = None


class _RowView(msgspec.Struct):
    # Any, not str: a row whose ts is a number must be kept with ts None, exactly as the
    # dict path does, instead of failing validation and vanishing.
    role: Any = None
    content: Any = None
    ts: Any = None
    record_type: Any = msgspec.field(default=None, name="_type")


decode_row = msgspec.json.Decoder(_RowView).decode


class _ToolMetaView(msgspec.Struct):
    meta: _MetaView | None = None


_decode_tool_meta = msgspec.json.Decoder(_ToolMetaView).decode


def _tool_meta(row: _RowView, line: bytes) -> dict[str, Any] | None:
    """``meta.tool`` and ``meta.exit_code`` of a tool row, decoded again for those rows only
    (two keys of it): user and assistant rows never have ``meta`` decoded at all."""
    if not isinstance(row.role, str) or row.role not in TOOL_ROLES:
        return None
    try:
        meta = _decode_tool_meta(line).meta
    except (msgspec.DecodeError, RecursionError):
        return None  # not an object, or not one msgspec reads: no tool or exit code
    return None if meta is None else {"tool": meta.tool, "exit_code": meta.exit_code}


def extract_turns_from_lines(
    lines: Iterable[bytes],
    *,
    assistant_excerpt_chars: int = 400,
    max_user_chars: int = MAX_USER_CHARS,
) -> list[TranscriptTurn]:
    """``extract_turns`` straight from JSONL lines, without materialising ``meta``.

    msgspec skips unknown fields without building them, so a row costs roughly its
    role/content/ts. Only for transcripts with no revision records (nothing to fold).
    Keeps exactly the rows the store's fold keeps: records with a ``_type`` (metadata,
    revision, archive) and blank, malformed, non-object or oversize lines are skipped.
    """
    ex = _Extractor(assistant_excerpt_chars, max_user_chars)
    first = True
    for raw in lines:
        if len(raw) - raw.endswith(b"\n") > MAX_LINE_BYTES:
            first = False
            continue  # the store's reader never yields these
        line = raw[len(UTF8_BOM) :] if first and raw.startswith(UTF8_BOM) else raw
        first = False
        try:
            row = decode_row(line)
        except (msgspec.DecodeError, RecursionError):
            # msgspec refuses some lines the store accepts (lone surrogate escapes from
            # the original's stdlib writer, 1e999); ask the store's own parser. Rare.
            obj, bad = parse_json_line(line)
            if not bad and type(obj) is dict and obj.get("_type") is None:
                role = obj.get("role")
                meta = obj.get("meta") if isinstance(role, str) and role in TOOL_ROLES else None
                ex.feed(role, obj.get("content"), obj.get("ts"), meta)
            continue
        if row.record_type is None:
            ex.feed(row.role, row.content, row.ts, _tool_meta(row, line))
    return ex.finish()


def count_user_turns(turns: Iterable[TranscriptTurn]) -> int:
    return sum(1 for t in turns if t.role == "user" and not t.injected)


def count_user_turns_in_records(records: Iterable[object]) -> int:
    """Genuine user turns straight from records; the same rule ``extract_turns`` applies."""
    return sum(1 for rec in records if is_user_turn(rec))


def last_activity_ts(turns: Sequence[TranscriptTurn]) -> str | None:
    for turn in reversed(turns):
        if turn.ts:
            return turn.ts
    return None


def _header(turn: TranscriptTurn) -> str:
    if turn.role != "user":
        return "ASSISTANT [excerpt]" if turn.truncated else "ASSISTANT"
    if turn.injected:
        return AUTOMATION_LABEL
    head = f"USER (turn {turn.user_turn})"
    if turn.repeat_of is not None:
        head += f" [resend of turn {turn.repeat_of}, not a new request]"
    if turn.ts:
        head += f" [{turn.ts}]"
    return head


def _block(turn: TranscriptTurn) -> str:
    return f"{_header(turn)}\n{turn.text}"


def render_input(turns: Iterable[TranscriptTurn]) -> str:
    """Every turn as a header line plus its text, blank-line separated."""
    return "\n\n".join(_block(t) for t in turns).strip()


def _omission_line(dropped: Sequence[TranscriptTurn]) -> str:
    numbers = [t.user_turn for t in dropped if t.user_turn is not None]
    if not numbers:
        return f"[... {len(dropped)} assistant/automation rows omitted ...]"
    if len(numbers) == 1:
        return f"[... user turn {numbers[0]} omitted ...]"
    return f"[... user turns {numbers[0]}-{numbers[-1]} omitted ...]"


def _cut(turn: TranscriptTurn, per_end: int) -> TranscriptTurn:
    # User text is never cut here (it is already <= max_user_chars): a half request
    # misleads more than a missing one, so the selection below keeps or drops it whole.
    if turn.role == "user" or len(turn.text) <= 2 * per_end:
        return turn
    return replace(turn, text=excerpt(turn.text, per_end), truncated=True)


def render_bounded_input(turns: Sequence[TranscriptTurn], max_chars: int = MAX_INPUT_CHARS) -> str:
    """``render_input`` capped at ``max_chars``: first user turns, then the newest.

    Over budget: each assistant turn is cut to about a quarter of the budget (an
    eighth per end); the turns through the first KEEP_FIRST_TURNS user turns are kept
    while they fit in half the budget (that is where the session's intent starts);
    then as many of the newest turns as fit; one line stands for the middle.
    """
    full = render_input(turns)
    if len(full) <= max_chars:
        return full
    cut = [_cut(t, max(1, max_chars // 8)) for t in turns]
    blocks = [_block(t) for t in cut]
    if len("\n\n".join(blocks)) <= max_chars:
        return "\n\n".join(blocks).strip()

    head_end = 0  # exclusive
    used = 0
    users_seen = 0
    for i, turn in enumerate(cut):
        if turn.user_turn is not None:
            users_seen += 1
            if users_seen > KEEP_FIRST_TURNS:
                break
        cost = len(blocks[i]) + 2
        if used + cost > max_chars // 2:
            break
        used += cost
        head_end = i + 1

    # Reserve room for the longest omission line this session could need, so the tail
    # loop stays linear instead of re-rendering the line for every candidate.
    reserve = 2 + max(
        len(_omission_line(cut)),
        len(f"[... user turns {len(cut)}-{len(cut)} omitted ...]"),
    )
    tail_start = len(cut)
    for i in range(len(cut) - 1, head_end - 1, -1):
        cost = len(blocks[i]) + 2
        if used + reserve + cost > max_chars:
            break
        used += cost
        tail_start = i

    parts = blocks[:head_end]
    if tail_start > head_end:
        parts.append(_omission_line(cut[head_end:tail_start]))
    parts.extend(blocks[tail_start:])
    return "\n\n".join(parts).strip()
