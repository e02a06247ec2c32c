"""The running state of one segmentation pass: intents so far, the current one, pending
questions and where each numbered PR or issue first came up."""

from __future__ import annotations

from dataclasses import dataclass, field

from summaries.core.heuristic.draft import Draft, Role
from summaries.core.heuristic.evidence import Ev, reply_evidence
from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.signals import UserSignals
from summaries.core.heuristic.words import refs

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

    def open(self, ex: Exchange, sig: UserSignals, text: str | None = None) -> Draft:
        draft = Draft(origin=ex.turn)
        self.before_open = self.current
        self.drafts.append(draft)
        self.place(draft, ex, sig, Role.WORK, text=text)
        self.current = draft
        return draft

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

    def open_from(self, p: Pending, ex: Exchange, sig: UserSignals) -> Draft:
        draft = Draft(origin=p.turn)
        self.drafts.append(draft)
        for q_ex, q_sig in p.items:
            draft.add(q_ex, q_sig, Role.QUESTION)
        self.place(draft, ex, sig, Role.WORK)
        self.pending.remove(p)
        self.current = draft
        return draft


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
