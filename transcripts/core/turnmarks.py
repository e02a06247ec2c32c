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

from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .fold import FoldReport
from .offsets import IndexCache
from .paging import PAGE_INDEX, chain_simple, open_chain

if TYPE_CHECKING:
    from .store import TranscriptStore


@dataclass(frozen=True, slots=True)
class TurnMark:
    ts: str  # the turn's user row
    after: str | None  # the cursor of the row before it; None: it is the session's first row


@dataclass(slots=True)
class TurnMarks:
    marks: list[TurnMark]
    report: FoldReport  # the whole session's fold report
    last: str | None  # the cursor of the session's last row; None: no rows


def turn_marks(
    store: TranscriptStore, key: str, *, cache: IndexCache = PAGE_INDEX
) -> TurnMarks | None:
    """Every user turn's mark in order (``SessionNotFound``), or None: fold instead."""
    with ExitStack() as files:
        chain, report = open_chain(store, key, files, cache)
        snaps = [snap for _, snap in chain]
        if not chain_simple(iter(snaps)):
            return None
        marks: list[TurnMark] = []
        before: str | None = None  # the previous file's last row
        for snap in snaps:
            fold, count = snap.fold, snap.count
            if any(row < count for row in list(fold.retyped)):
                return None
            for row, ts, prev in list(fold.turns):
                if row >= count:
                    break  # indexed after this snapshot
                marks.append(TurnMark(ts, prev if row else before))
            if count:
                before = snap.last_ts
        return TurnMarks(marks, report, before)
