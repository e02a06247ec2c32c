"""Intents while they are being assembled, and the running state of one segmentation pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from summaries.core.heuristic.evidence import Ev, reply_evidence
from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.signals import UserSignals
from summaries.core.heuristic.words import content_words, refs

# Share of a turn's distinctive words already known to an intent at or above which the
# turn is about that intent.
CONTINUES = 0.5
# Share of a long turn's words an intent must know for three shared words to relate them.
RELATED_SHARE = 0.25


class Role(Enum):
    WORK = "work"  # the turn advances this intent; its replies are this intent's evidence
    RESEND = "resend"  # a verbatim resend: in range, but no new ask and no insistence
    SPAN = "span"  # a side question asked while this intent ran: in range only
    DROP = "drop"  # the turn drops this intent
    QUESTION = "question"  # the feasibility question this intent grew out of


@dataclass(frozen=True, slots=True)
class Entry:
    turn: int
    text: str
    sig: UserSignals
    replies: tuple[str, ...]
    role: Role
    # A side turn's (SPAN) replies that ran something: a test run while the person set a
    # rule or asked aside still checks the code the intent in hand changed.
    runs: tuple[str, ...] = ()


@dataclass(slots=True)
class Draft:
    origin: int
    entries: list[Entry] = field(default_factory=list)
    turns: set[int] = field(default_factory=set)
    breaks: set[int] = field(default_factory=set)  # turns that follow a day-scale gap
    user_words: set[str] = field(default_factory=set)
    vocab: set[str] = field(default_factory=set)
    closed: bool = False
    dropped: bool = False
    settled: bool = False  # the last word on it was a close, a pass or the person's ok
    late_accept: bool = False  # accepted in the turn that moved on to the next intent
    made: bool = False  # the last word on it was a change reported made, nothing left open
    worked: bool = False  # something was changed or run for it at some point

    def add(
        self,
        ex: Exchange,
        sig: UserSignals,
        role: Role,
        *,
        text: str | None = None,
        replies: tuple[str, ...] | None = None,
    ) -> None:
        if replies is None:
            own = role in (Role.WORK, Role.RESEND, Role.QUESTION)
            # the entry (its state) reads the notifications' verdicts too; boundaries and
            # vocabulary below read the replies alone
            replies, evidence = (ex.replies, ex.with_notes()[0]) if own else ((), ())
        else:
            evidence = replies
        runs: tuple[str, ...] = ()
        if role is Role.SPAN:
            ran = (Ev.GREEN, Ev.RED)
            runs = tuple(
                r for r in ex.with_notes()[0] if any(e.kind in ran for e in reply_evidence(r))
            )
        self.entries.append(Entry(ex.turn, text or ex.text, sig, evidence, role, runs))
        self.turns.add(ex.turn)
        if ex.gap_before:
            self.breaks.add(ex.turn)
        if role is Role.SPAN:
            return
        self.user_words |= sig.words
        self.vocab |= sig.words
        for reply in replies:
            self.vocab |= content_words(reply) | refs(reply)
        if role is Role.DROP:
            self.dropped, self.closed = True, False
        if role is not Role.WORK:
            return
        if not (sig.ack or sig.close_request or sig.user_close):
            self.closed = self.dropped = False  # new work on this intent reopens it
        self.settled = sig.ack or sig.accept or sig.claims_works or (self.settled and sig.question)
        if sig.user_close:
            self.closed = self.settled = True
        if sig.work_order or sig.problem or sig.correction:
            self.made = False  # a new ask: nothing of it is made yet
        for reply in replies:
            for ev in reply_evidence(reply):
                if ev.kind in (Ev.CLOSE, Ev.GREEN):
                    self.closed = self.closed or ev.kind is Ev.CLOSE
                    self.settled = True
                elif ev.kind is Ev.RED:
                    self.closed = self.settled = self.made = False  # a failure reopens it
                elif ev.kind in (Ev.OPEN, Ev.CHANGE):
                    self.settled = False
                if ev.kind in (Ev.CHANGE, Ev.DOC_CHANGE, Ev.GREEN, Ev.RED):
                    self.worked = True
                if ev.kind in (Ev.CHANGE, Ev.DOC_CHANGE, Ev.OPEN):
                    self.made = ev.kind is not Ev.OPEN

    def sim(self, words: frozenset[str]) -> float:
        return len(words & self.vocab) / len(words) if words else 1.0

    def related(self, words: frozenset[str]) -> bool:
        """Shares enough distinctive words: half of a short turn, or three of a long one
        (and a fair share of it: a long verbose request shares three words with any long
        intent's vocabulary, "model", "data", "run", and is not about it for that)."""
        share = self.sim(words)
        return share >= CONTINUES or (len(words & self.vocab) >= 3 and share >= RELATED_SHARE)


def ranges(draft: Draft) -> list[list[int]]:
    """Runs of consecutive turns, split where a day-scale gap fell between them."""
    out: list[list[int]] = []
    for turn in sorted(draft.turns):
        if out and out[-1][1] == turn - 1 and turn not in draft.breaks:
            out[-1][1] = turn
        else:
            out.append([turn, turn])
    return out


# Only this many recent intents and pending questions are compared against each turn,
# which keeps a pass linear in the number of turns however many intents a session has.
LOOKBACK = 25


@dataclass(slots=True)
class Pending:
    """A feasibility question waiting to see whether it leads to work."""

    turn: int
    words: set[str]
    items: list[tuple[Exchange, UserSignals]]


@dataclass(slots=True)
class SegState:
    drafts: list[Draft] = field(default_factory=list)
    current: Draft | None = None
    pending: list[Pending] = field(default_factory=list)
    by_turn: dict[int, Draft] = field(default_factory=dict)
    before_open: Draft | None = None  # the current intent before the newest was opened
    ref_owner: dict[str, Draft] = field(default_factory=dict)  # "#3301": where it first came up

    def open(self, ex: Exchange, sig: UserSignals, text: str | None = None) -> None:
        draft = Draft(origin=ex.turn)
        self.before_open = self.current
        self.drafts.append(draft)
        self.place(draft, ex, sig, Role.WORK, text=text)
        self.current = draft

    def place(
        self,
        draft: Draft,
        ex: Exchange,
        sig: UserSignals,
        role: Role,
        *,
        text: str | None = None,
        replies: tuple[str, ...] | None = None,
    ) -> None:
        draft.add(ex, sig, role, text=text, replies=replies)
        self.by_turn.setdefault(ex.turn, draft)
        entry = draft.entries[-1]
        for ref in refs(entry.text) | made_refs(entry.replies):
            self.ref_owner.setdefault(ref, draft)

    def aside(self, ex: Exchange, sig: UserSignals) -> None:
        """A side turn: in the range of the current intent while that one is open."""
        cur = self.current
        if cur is not None and not (cur.closed or cur.dropped):
            self.place(cur, ex, sig, Role.SPAN)

    def open_from(self, p: Pending, ex: Exchange, sig: UserSignals) -> None:
        draft = Draft(origin=p.turn)
        self.drafts.append(draft)
        for q_ex, q_sig in p.items:
            draft.add(q_ex, q_sig, Role.QUESTION)
        self.place(draft, ex, sig, Role.WORK)
        self.pending.remove(p)
        self.current = draft


def made_refs(replies: tuple[str, ...]) -> frozenset[str]:
    """PR and issue numbers a reply reports making ("Opened #3301", "Merged #81"); a number
    only mentioned in passing ("see #12") says nothing about where it belongs."""
    made = (Ev.CLOSE, Ev.CHANGE, Ev.DOC_CHANGE)
    return frozenset(
        ref
        for reply in replies
        if refs(reply)
        for ev in reply_evidence(reply)
        if ev.kind in made
        for ref in refs(ev.sentence)
    )
