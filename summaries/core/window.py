"""The bounded pass's turns: the end of a long session, numbered as in the whole session.

A long session's pass reads only the folded rows of its last ``WINDOW_BYTES``
(``TranscriptStore.read_session_tail``) and keeps at most its last ``WINDOW_USER_TURNS``
genuine user turns. The model's prompt is bounded anyway (``render_bounded_input``);
reading all of a 100 MB session to throw most of it away cost the pass its whole budget
(94 s). The turns are ``extract_turns`` of a slice of those rows: the same rule as a
whole-session read, renumbered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from transcripts.core.user_turns import is_user_turn

from .extract import extract_turns
from .transcript_turn import TranscriptTurn

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
    """The kept turns of the window's folded ``rows`` (oldest first).

    ``total_user_turns`` is the whole session's genuine user turn count; the window's turns
    are numbered so that its last user turn is that number. The window's first genuine
    user turn only seeds resend detection (its predecessor is outside) and is dropped, as
    is everything before the second one. None when the window cannot stand for the
    session: fewer than two user turns, or a count that does not add up.
    """
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
