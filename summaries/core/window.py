"""The bounded pass's turns: the end of a long session, numbered as in the whole session.

A long session's pass reads only its last ``WINDOW_BYTES`` (``transcripts.core.tail``) and
keeps at most its last ``WINDOW_USER_TURNS`` genuine user turns. The model's prompt is
bounded anyway (``render_bounded_input``); reading all of a 100 MB session to throw
most of it away cost the pass its whole budget (94 s).

Folding a window: a revision is appended after its target, so every revision that targets
a row of the window is inside it, in the same file; a revision in the window whose target
lies before it targets nothing the window keeps (the fold reports it, nothing changes).
A position hint (``_after_ts``) can move a row across the window's start: ``None``, and
the caller reads the whole session (rare; such a session is visible in the fold report).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import msgspec

from transcripts.core.codec import may_change_rows
from transcripts.core.fold import fold_lines
from transcripts.core.reader import RawLine, parse_json_line
from transcripts.core.user_turns import is_user_turn

from .extract import decode_row, extract_turns, extract_turns_from_lines
from .transcript_turn import TranscriptTurn

WINDOW_BYTES = 4 * 1024 * 1024
WINDOW_USER_TURNS = 100

_MOVE = re.compile(rb'"_after_ts"')
T = TypeVar("T")


def _rows(files: Sequence[Sequence[bytes]]) -> list[dict[str, Any]]:
    """Each file's window folded on its own (revisions never cross files)."""
    rows: list[dict[str, Any]] = []
    for lines in files:
        offset = 1  # not 0: the reader already removed a BOM; offsets only label anomalies
        raw: list[RawLine] = []
        for line in lines:
            raw.append(RawLine(offset, line, True))
            offset += len(line) + 1
        rows.extend(fold_lines(raw).rows)
    return rows


def _is_user_line(item: tuple[int, bytes]) -> bool:
    """``is_user_turn`` of a raw line, decoding only what the rule reads (as extraction)."""
    line = item[1]
    try:
        row = decode_row(line)
    except (msgspec.DecodeError, RecursionError):
        obj, bad = parse_json_line(line)
        return not bad and type(obj) is dict and obj.get("_type") is None and is_user_turn(obj)
    if row.record_type is not None:
        return False
    return is_user_turn({"role": row.role, "content": row.content})


def _start(items: Sequence[T], is_user: Callable[[T], bool], users: int) -> int:
    """Index of the ``users``-th genuine user turn counted from the end (0 if fewer)."""
    seen = 0
    for i in range(len(items) - 1, -1, -1):
        if is_user(items[i]):
            seen += 1
            if seen == users:
                return i
    return 0


def window_turns(
    files: Sequence[Sequence[bytes]],
    total_user_turns: int,
    *,
    assistant_excerpt_chars: int,
    max_user_turns: int = WINDOW_USER_TURNS,
) -> list[TranscriptTurn] | None:
    """The kept turns of the window ``files`` (each file's whole lines, oldest file first).

    ``total_user_turns`` is the whole session's genuine user turn count; the window's turns
    are numbered so that its last user turn is that number. The window's first genuine
    user turn only seeds resend detection (its predecessor is outside) and is dropped, as
    is everything before the second one. None when the window cannot stand for the
    session: a position hint, fewer than two user turns, or a count that does not add up.
    """
    if any(_MOVE.search(line) for lines in files for line in lines):
        return None  # anywhere in the window: a moved row may cross the cut below too
    # Only the lines from the last max_user_turns + 1 user turns on are read (folded,
    # extracted, redacted): the earlier lines of the window would be dropped below anyway.
    # The cut uses the rows as written; a revision after it that targets a row before it
    # targets nothing kept, and the count below is of the folded, kept rows.
    flat = [(n, line) for n, lines in enumerate(files) for line in lines]
    flat = flat[_start(flat, _is_user_line, max_user_turns + 1) :]
    if any(may_change_rows(line) for _, line in flat):
        parts: list[list[bytes]] = [[] for _ in files]
        for n, line in flat:
            parts[n].append(line)
        turns = extract_turns(_rows(parts), assistant_excerpt_chars=assistant_excerpt_chars)
    else:
        turns = extract_turns_from_lines(
            [line for _, line in flat], assistant_excerpt_chars=assistant_excerpt_chars
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
