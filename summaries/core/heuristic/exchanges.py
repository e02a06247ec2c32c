"""Group extracted turns into exchanges: one genuine user turn and the replies to it.

Only the person's turns can open or move an intent, so everything is keyed on
them. Automation posting as the user (cron, subagent, nudge, monitor rows) and
the assistant's replies to it are set aside here: they never reach segmentation,
so they can neither create an intent nor lend it evidence (prompt trap 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from summaries.core.heuristic.evidence import FAILED_CHECK, notification_verdict, tool_sentences_at
from summaries.core.heuristic.lexicon import COMPACTION
from summaries.core.transcript_turn import TranscriptTurn

# A day-scale gap separates a routine re-run from a retry (boundary signal 2). Twelve
# hours splits "yesterday" from "this morning" but not a long working session.
DAY_GAP = timedelta(hours=12)
# A notification this soon after the exchange's last row reports on what that exchange
# pushed or started (CI on the branch, the sync of the commit, the job it ran). A nightly
# run's notification, hours later, belongs to no exchange.
NOTIFICATION_WINDOW = timedelta(minutes=45)


@dataclass(frozen=True, slots=True)
class Exchange:
    turn: int  # the genuine user-turn number
    text: str
    ts: datetime | None
    repeat_of: int | None  # extraction's verbatim-resend marker
    replies: tuple[str, ...]  # assistant excerpts answering this turn
    gap_before: bool  # a day-scale pause since the previous exchange ended
    after_compaction: bool  # a compaction or context reset sits just before this turn
    # the assistant's last word before this turn was a question: the turn answers it
    answers: bool = False
    raw_ts: str | None = None  # the person row's stamp as written: evidence links to it
    reply_ts: tuple[str | None, ...] = ()  # each reply's row stamp, parallel to ``replies``
    # verdicts of notifications posted during or just after this exchange (CI on what it
    # pushed), each (how many replies came before it, sentence, row stamp): read for its
    # state (``with_notes``), never for boundaries or vocabulary (``Draft.add``)
    notes: tuple[tuple[int, str, str | None], ...] = ()

    def with_notes(self) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
        """The replies with the notifications' verdicts where they fell, and their stamps."""
        if not self.notes:
            return self.replies, self.reply_ts
        texts, stamps = list(self.replies), list(self.reply_ts)
        for at, text, ts in reversed(self.notes):
            texts.insert(at, text)
            stamps.insert(at, ts)
        return tuple(texts), tuple(stamps)


def parse_ts(value: str | None) -> datetime | None:
    """Offset-aware datetime, or None; naive legacy stamps are read as UTC-free wall time."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def _is_compaction_notice(text: str) -> bool:
    # Only a short notice or a bracketed marker: a reply that merely mentions the word
    # must keep its evidence.
    head = text.lstrip()[:200]
    return bool(COMPACTION.search(head)) and (head.startswith("[") or len(text) < 300)


def _elapsed(prev: datetime | None, now: datetime | None) -> timedelta | None:
    """Time between two stamps, None when either is missing or only one has an offset."""
    if prev is None or now is None or (prev.tzinfo is None) != (now.tzinfo is None):
        return None
    return now - prev


@dataclass(slots=True)
class _Pending:
    """An exchange while its replies, their stamps and the notifications are collected."""

    ex: Exchange
    replies: list[str] = field(default_factory=list)
    reply_ts: list[str | None] = field(default_factory=list)
    notes: list[tuple[int, str, str | None]] = field(default_factory=list)
    asked: bool = False  # its last assistant reply ends with a question mark

    def close(self) -> Exchange:
        return replace(
            self.ex,
            replies=tuple(self.replies),
            reply_ts=tuple(self.reply_ts),
            notes=tuple(self.notes),
        )


def build_exchanges(turns: Sequence[TranscriptTurn]) -> list[Exchange]:
    """Exchanges in transcript order; replies to automation rows are dropped."""
    out: list[Exchange] = []
    current: _Pending | None = None
    last_ts: datetime | None = None
    compaction_pending = False
    asked = False
    edited: set[str] = set()  # files the tools changed so far: a later run of one is a check
    for turn in turns:
        ts = parse_ts(turn.ts)
        if turn.role == "user":
            verdict = notification_verdict(turn.text) if turn.injected else None
            elapsed = _elapsed(last_ts, ts)
            soon = elapsed is not None and timedelta(0) <= elapsed <= NOTIFICATION_WINDOW
            if current is not None and verdict is not None and soon:
                # CI reporting on what this exchange pushed: evidence for it, never a
                # request. After a red run the assistant fixing it goes on with the same
                # exchange; after a green one, what it says next answers the automation.
                current.notes.append((len(current.replies), verdict, turn.ts))
                if verdict == FAILED_CHECK:
                    last_ts = ts or last_ts
                    continue
            if current is not None:
                out.append(current.close())
                asked, current = current.asked, None
            if turn.injected or turn.user_turn is None:
                compaction_pending = compaction_pending or bool(COMPACTION.search(turn.text))
                continue
            gap = elapsed is not None and elapsed >= DAY_GAP
            ex = Exchange(
                turn=turn.user_turn,
                text=turn.text,
                ts=ts,
                repeat_of=turn.repeat_of,
                replies=(),
                gap_before=gap,
                # A person re-briefing after a reset is continuing, not starting over.
                after_compaction=compaction_pending or bool(COMPACTION.search(turn.text)),
                answers=asked and not gap,
                raw_ts=turn.ts,
            )
            current = _Pending(ex)
            asked, compaction_pending = False, False
            last_ts = ts or last_ts
        elif _is_compaction_notice(turn.text):
            compaction_pending = True  # a compaction notice is bookkeeping, not evidence
        elif current is not None:
            current.replies.append(turn.text)
            current.reply_ts.append(turn.ts)
            current.asked = turn.text.rstrip().rstrip("*_` )").endswith("?")
            last_ts = ts or last_ts
        if current is not None and turn.tools:
            # what the tools showed, as evidence sentences where the rows stood
            for said, stamp in tool_sentences_at(turn.tools, edited):
                current.replies.append(said)
                current.reply_ts.append(stamp or turn.ts)
    if current is not None:
        out.append(current.close())
    return out
