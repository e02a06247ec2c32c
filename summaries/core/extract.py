"""Transcript rows as the bounded input the summarizer reads (a long session's pass reads
its last ``WINDOW_BYTES``, ``window_turns``: reading all of a 100 MB session cost 94 s).

Every kept text is redacted here, before any backend reads it: a pasted secret must reach
neither a model server nor the heuristic, whose shaping (capitals, clipping) could hide it
from the final redaction. Redacted BEFORE it is cut: a cut can split a secret so that no
pattern matches the half.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from transcripts.core.redaction import redact_text
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


def _tool_row(kind: str, content: str, meta: object, ts: object) -> ToolRow:
    info = meta if isinstance(meta, dict) else {}
    tool, code = info.get("tool"), info.get("exit_code")
    return ToolRow(
        kind,
        excerpt(redact_text(content)[0], TOOL_EXCERPT_CHARS),
        tool if isinstance(tool, str) else None,
        code if type(code) is int else None,
        ts if isinstance(ts, str) else None,
    )


def extract_turns(
    records: Iterable[object],
    *,
    assistant_excerpt_chars: int = 400,
    max_user_chars: int = MAX_USER_CHARS,
) -> list[TranscriptTurn]:
    """THE rule of what a turn is and which rows it holds. Of ``meta`` only a tool row's
    ``tool``/``exit_code`` is read: the rest is most of the bytes and says nothing."""
    turns: list[TranscriptTurn] = []
    tools: list[ToolRow] = []
    user_count = 0
    prev_norm: str | None = None
    prev_turn = 0

    def flush_tools() -> None:
        if tools and turns:
            turns[-1] = replace(turns[-1], tools=tuple(tools))
        tools.clear()

    for rec in records:
        if not isinstance(rec, dict):
            continue
        role, content, ts = rec.get("role"), rec.get("content"), rec.get("ts")
        if not isinstance(role, str) or not isinstance(content, str):
            continue
        if role in TOOL_ROLES:
            # An empty output is still a result: its exit code says how the call went
            # ("git checkout -- f" prints nothing). Before any kept row there is nothing
            # to attach it to: no person turn has asked for anything yet.
            if turns:
                tools.append(_tool_row(TOOL_ROLES[role], content, rec.get("meta"), ts))
            continue
        if not content.strip() or role not in READ_ROLES:
            continue
        flush_tools()
        stamp = ts if isinstance(ts, str) else None
        index = len(turns) + 1
        # Redacted whole, then cut (see the module docstring). Plain prose takes the
        # redactor's fast path and comes back as the same object.
        clean = redact_text(content)[0]
        if role != "user":
            text = excerpt(clean, assistant_excerpt_chars)
            turns.append(
                TranscriptTurn(index, "assistant", text, stamp, None, truncated=text != clean)
            )
            continue
        text = clean[:max_user_chars]
        number = repeat = None
        # A non-blank user row that is no person's turn is automation (the mirror's count
        # and the dashboard apply the same rule): neither counted nor remembered, so a
        # resend on either side of an automation row is still a resend.
        if is_user_turn(rec):
            number = user_count = user_count + 1
            # Compared before redaction: two different pasted tokens redact to the same
            # tag, and "use token A" then "use token B" is not a resend.
            norm = " ".join(content[:max_user_chars].split())
            repeat = prev_turn if norm == prev_norm else None
            prev_norm, prev_turn = norm, user_count
        turns.append(
            TranscriptTurn(
                index,
                "user",
                text,
                stamp,
                number,
                injected=number is None,
                repeat_of=repeat,
                truncated=len(clean) > len(text),
            )
        )
    flush_tools()
    return turns


def count_user_turns(turns: Iterable[TranscriptTurn]) -> int:
    return sum(1 for t in turns if t.role == "user" and not t.injected)


def last_activity_ts(turns: Sequence[TranscriptTurn]) -> str | None:
    return next((turn.ts for turn in reversed(turns) if turn.ts), None)


def _block(turn: TranscriptTurn) -> str:
    if turn.role != "user":
        head = "ASSISTANT [excerpt]" if turn.truncated else "ASSISTANT"
    elif turn.injected:
        head = AUTOMATION_LABEL
    else:
        head = f"USER (turn {turn.user_turn})"
        if turn.repeat_of is not None:
            head += f" [resend of turn {turn.repeat_of}, not a new request]"
        if turn.ts:
            head += f" [{turn.ts}]"
    return f"{head}\n{turn.text}"


def render_input(turns: Iterable[TranscriptTurn]) -> str:
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
    """``render_input`` capped at ``max_chars``: assistant turns cut to a quarter of it;
    the turns through the first KEEP_FIRST_TURNS user turns kept while they fit in half
    (where the intent starts); then the newest that fit; one line for the middle."""
    full = render_input(turns)
    if len(full) <= max_chars:
        return full
    cut = [_cut(t, max(1, max_chars // 8)) for t in turns]
    blocks = [_block(t) for t in cut]
    if len("\n\n".join(blocks)) <= max_chars:
        return "\n\n".join(blocks).strip()

    head_end = used = users_seen = 0  # head_end: exclusive
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


WINDOW_BYTES = 4 * 1024 * 1024
WINDOW_USER_TURNS = 100


def _start(rows: Sequence[dict[str, Any]], users: int) -> int:
    """Index of the ``users``-th genuine user turn counted from the end (0 if fewer)."""
    seen = 0
    for i in range(len(rows) - 1, -1, -1):
        if is_user_turn(rows[i]):
            seen += 1
            if seen == users:
                return i
    return 0


def window_turns(
    rows: Sequence[dict[str, Any]],
    total_user_turns: int,
    *,
    assistant_excerpt_chars: int,
    max_user_turns: int = WINDOW_USER_TURNS,
) -> list[TranscriptTurn] | None:
    """The window's turns, numbered so that the last user turn is ``total_user_turns``.
    Its first user turn only seeds resend detection (its predecessor is outside) and is
    dropped with all before it. None when it cannot stand for the session (under two
    user turns, or a count that does not add up)."""
    # Only the rows from the last max_user_turns + 1 user turns on are extracted (and
    # redacted): the earlier rows of the window would be dropped below anyway.
    turns = extract_turns(
        rows[_start(rows, max_user_turns + 1) :], assistant_excerpt_chars=assistant_excerpt_chars
    )
    starts = [i for i, t in enumerate(turns) if t.user_turn is not None]
    seen = len(starts)
    offset = total_user_turns - seen
    if seen < 2 or offset < 0:
        return None
    first_kept = max(2, seen - max_user_turns + 1)  # 1-based among the window's user turns
    kept = turns[starts[first_kept - 1] :]
    return [
        replace(
            t,
            index=i,
            user_turn=None if t.user_turn is None else t.user_turn + offset,
            repeat_of=None if t.repeat_of is None else t.repeat_of + offset,
        )
        for i, t in enumerate(kept, start=1)
    ]
