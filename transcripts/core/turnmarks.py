"""Where each user turn of a session starts, from the offset indexes (no fold of the rows).

The session page opens at its last turns and loads a turn range on demand; both need the
row where turn k starts without folding the whole session. The offset index
(``offsets.py``) notes, per file, every row that is a user turn as stored
(``turns.is_user_turn``, the summarizer's rule) and the rows whose role or content a
revision patched. Turn k is then the k-th mark over the chained files (archives first, as
``read_session`` chains them), and its rows are read with the cursor reader from the row
just before it (``after``).

The answer is None (the caller folds everything) when the paging reader itself would fall
back (``paging.chain_simple``) or a revision patched the role or content of a row: only the
folded row can say whether it is still a turn.
"""

from __future__ import annotations

from bisect import bisect_left
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .fold import FoldReport
from .offsets import IndexCache, Snapshot
from .paging import PAGE_INDEX, chain_simple, open_chain

if TYPE_CHECKING:
    from .store import TranscriptStore


@dataclass(frozen=True, slots=True)
class TurnMark:
    ts: str  # the turn's user row
    after: str | None  # the cursor of the row before it; None: it is the session's first row


@dataclass(slots=True)
class TurnMarks:
    """The user turns of a session as of one snapshot of its files: O(files) to build."""

    files: list[tuple[Snapshot, int, str | None]]  # (file, its turns, the previous file's last ts)
    report: FoldReport  # the whole session's fold report
    last: str | None  # the cursor of the session's last row; None: no rows
    total: int

    def mark(self, turn: int) -> TurnMark:
        """Turn ``turn`` (1-based, <= total)."""
        for snap, count, before in self.files:
            if turn <= count:
                fold, i = snap.fold, turn - 1
                row = fold.turn_rows[i]
                return TurnMark(fold.turn_ts[i], fold.turn_prev[i] if row else before)
            turn -= count
        raise IndexError(turn)


def turn_marks(
    store: TranscriptStore, key: str, *, cache: IndexCache = PAGE_INDEX
) -> TurnMarks | None:
    """The session's user turns (``SessionNotFound``), or None: fold instead."""
    with ExitStack() as files:
        chain, report = open_chain(store, key, files, cache)
        snaps = [snap for _, snap in chain]
        if not chain_simple(iter(snaps)):
            return None
        marks: list[tuple[Snapshot, int, str | None]] = []
        before: str | None = None  # the previous file's last row
        total = 0
        for snap in snaps:
            fold, count = snap.fold, snap.count
            if any(row < count for row in list(fold.retyped)):
                return None
            # Rows indexed after this snapshot do not count (turn_rows is ascending).
            turns = bisect_left(fold.turn_rows, count, hi=len(fold.turn_rows))
            marks.append((snap, turns, before))
            total += turns
            if count:
                before = snap.last_ts
        return TurnMarks(marks, report, before, total)
