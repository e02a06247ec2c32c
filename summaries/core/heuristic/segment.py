"""Split a session into intents at the boundary signals the prompt ranks.

One pass over the person's turns, in order. Each turn either continues the
current intent, opens a new one, resumes an older one, or is held as a pending
question. Boundaries, most reliable first: a close (commit, merge, PR, push,
deploy) ends the current intent; a day-scale gap ends its current range; an
explicit pivot that leads the turn opens a new intent; a correction always stays.
A compaction is never a boundary, and automation never reaches this module.

Splitting is the costlier mistake, so a follow-up that points back at the work
stays with it even when it shares few words: a report on the result ("ran fine",
"still flaky"), a reference back ("what you found", "... though"), a definite
reference to something the person named ("raise the limit"), a refinement led by
an adjusting verb ("use redis for the counter"). A drop that names only a piece of
the work, one item of a batch ("the eslint one: skip it"), or only what the assistant
offered, leaves the intent going.

Merging is the other mistake, and finished work is where it happens: it must not
absorb what follows it. After a day-scale pause, settled or closed work is picked up
again only by a turn that reports on it (a result, a regression, a close, a follow-up
on its review, a reference back), never by shared words or a bare "same ...?". After a
close, a correction that shares nothing with the work corrects something else, and a
guard against a recurrence ("make sure that can't happen again") is a deliverable of
its own. A "while we're in X:" lead only names the area; the rest of the turn decides.
A numbered PR or issue ("#3301") routes a turn to the intent that asked for or made it,
and a breakage blamed on an earlier step ("red after the flag merge") goes back to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from summaries.core.heuristic import lexicon as lx
from summaries.core.heuristic.draft import CONTINUES, Draft, Role
from summaries.core.heuristic.evidence import Ev, reply_evidence
from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.signals import (
    UserSignals,
    classify,
    is_work_order,
    split_after_drop,
)
from summaries.core.heuristic.words import content_words, refs

# Share of a request's distinctive words known to the current intent below which an
# unmarked request is a new topic.
_NEW_TOPIC = 0.15
# Only this many recent intents and pending questions are compared against each turn,
# which keeps a pass linear in the number of turns however many intents a session has.
_LOOKBACK = 25
_UNDO_ONLY = re.compile(
    r"^\W*(?:and\s+|just\s+|please\s+)*(?:revert|undo|roll ?back|discard|reset|drop)"
    r"(?:\s+(?:it|that|this|them|everything|all|the changes?|please))*\W*$",
    re.IGNORECASE,
)
# A turn answering the assistant's question with at most this many distinctive words is
# an answer about the work in hand, not a new topic.
_ANSWER_WORDS = 8


@dataclass(slots=True)
class _Pending:
    """A feasibility question waiting to see whether it leads to work."""

    turn: int
    words: set[str]
    items: list[tuple[Exchange, UserSignals]]


@dataclass(slots=True)
class _State:
    drafts: list[Draft] = field(default_factory=list)
    current: Draft | None = None
    pending: list[_Pending] = field(default_factory=list)
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
        for ref in refs(entry.text) | _made_refs(entry.replies):
            self.ref_owner.setdefault(ref, draft)

    def open_from(self, p: _Pending, ex: Exchange, sig: UserSignals) -> Draft:
        draft = Draft(origin=p.turn)
        self.drafts.append(draft)
        for q_ex, q_sig in p.items:
            draft.add(q_ex, q_sig, Role.QUESTION)
        self.place(draft, ex, sig, Role.WORK)
        self.pending.remove(p)
        self.current = draft
        return draft


def _made_refs(replies: tuple[str, ...]) -> frozenset[str]:
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


def _open_ok(sig: UserSignals) -> bool:
    """Whether a turn has enough substance to open an intent of its own."""
    return bool(sig.words) and not sig.ack


def _match_pending(
    st: _State, sig: UserSignals, prev: _Pending | None, work_turn: bool
) -> _Pending | None:
    cur = st.current
    for p in reversed(st.pending[-_LOOKBACK:]):
        shared = len(sig.words & p.words)
        against = len(sig.words & cur.user_words) if cur else 0
        if shared >= 2 and shared > against:
            return p
        if sig.refers_back and shared >= 1:
            return p
    if (
        prev is not None
        and sig.continuation
        and work_turn
        and (cur is None or cur.closed or not (sig.words & cur.vocab))
    ):
        return prev
    return None


def _best_older(st: _State, words: frozenset[str]) -> tuple[Draft | None, float]:
    best: Draft | None = None
    score = 0.0
    for draft in st.drafts[-_LOOKBACK:]:
        if draft is st.current:
            continue
        s = draft.sim(words)
        if s > score:
            best, score = draft, s
    return best, score


def _names_its_work(text: str, draft: Draft) -> bool:
    """ "raise the limit to 30/hour": a definite reference to something the person named in
    this intent, backed by a second shared word, points back at the same work."""
    named = content_words(" ".join(lx.DEFINITE.findall(text.lower())))
    words = content_words(text)
    return bool(named & draft.user_words) and len(words & draft.vocab) >= 2


def _subjectless(text: str) -> bool:
    """ "still flaky", "again?": a report with no subject of its own is about the work in hand."""
    return bool(lx.SUBJECTLESS.match(text.lower()))


def _continues_closed(sig: UserSignals, cur: Draft, text: str, *, gap: bool = False) -> bool:
    """After a close, only follow-ups about the same work stay in the intent.

    After a day-scale pause the bar is higher: finished work is picked up again only by a
    turn that says so (a close, a result, a regression, a follow-up on its review, a
    reference back, its own named object), never by shared words, a bare "and"/"same"
    lead or brevity alone ("same nginx thing on grafana?", "why did it take 41 minutes?").
    """
    if cur.dropped:
        # "while you're in there: ..." after a drop is not about the dropped work
        return sig.resume or sig.correction or cur.sim(sig.words) >= CONTINUES
    if gap:
        return _reports_on(sig, cur, text)
    return (
        _reports_on(sig, cur, text)
        or (sig.continuation and not sig.pivot_weak)
        or cur.related(sig.words)
    )


def _reports_on(sig: UserSignals, cur: Draft, text: str) -> bool:
    """A turn that reports on, closes or follows up the work in hand, whatever its words."""
    return (
        sig.close_request
        or sig.user_close
        or sig.ack
        or bool(sig.option_pick)
        # "no, the other bucket" corrects the work; "the project is acme-analytics now, not
        # acme-dw. fix profiles.yml" corrects a fact about something the work never touched
        or (sig.correction and not _corrects_elsewhere(sig, cur))
        or sig.resume
        or sig.deferred_check
        or sig.followup
        or sig.claims_works  # "export ran fine overnight": a report on the work just closed
        # "main is red now", "still flaky": the closed work is broken after all
        or (sig.regression and (bool(sig.words & cur.vocab) or _subjectless(text)))
        or sig.refers_back
        or _names_its_work(text, cur)
    )


def _corrects_elsewhere(sig: UserSignals, cur: Draft) -> bool:
    """ "the project is acme-analytics now, not acme-dw. fix profiles.yml" after a merge: a
    correction that shares no word with the closed work corrects something else."""
    return cur.closed and len(sig.words) > 2 and not sig.words & cur.vocab


def _points_back(sig: UserSignals) -> bool:
    """Signals that a turn is about the work in hand, whatever its words."""
    return (
        sig.continuation
        or sig.refers_back
        or sig.claims_works
        or sig.regression  # "Sentry still shows a few from Monaco" right after the fix
        or sig.anaphora
        or sig.ack
        or bool(sig.option_pick)
        or sig.correction
        or sig.user_close
        or sig.close_request
        or sig.deferred_check
        or sig.followup
    )


def _adds_beside(older: Draft, sig: UserSignals, text: str) -> bool:
    """ "can we also rate-limit password reset? same setup": a new deliverable next to
    finished work, not a reopening of it (a problem with that work would reopen it)."""
    return (
        older.closed
        and older.settled
        and sig.work_order
        and not (sig.resume or sig.problem or sig.correction)
        and bool(lx.ADDITIVE.search(text.lower()))
    )


def _owner_elsewhere(st: _State, sig: UserSignals, text: str) -> Draft | None:
    """An older intent the turn names in the person's own words while the current shares none."""
    cur = st.current
    if cur is None or not sig.words or cur.sim(sig.words) > 0:
        return None
    older, score = _best_older(st, sig.words)
    # "main went red after the flag merge": a breakage blamed on an earlier step points back
    # at that work even when it shares only a word or two with it
    bar = _NEW_TOPIC if sig.regression and sig.refers_back else CONTINUES
    if older is not None and score >= bar and sig.words & older.user_words:
        return None if _adds_beside(older, sig, text) else older
    return None


def _ref_owner(st: _State, sig: UserSignals) -> Draft | None:
    """ "#3301 got approved. merge it": the one intent where the numbers it names came up."""
    owners = {id(st.ref_owner[w]): st.ref_owner[w] for w in sig.words if w in st.ref_owner}
    return next(iter(owners.values())) if len(owners) == 1 else None


def _finished(draft: Draft) -> bool:
    return not draft.dropped and (draft.closed or draft.settled or draft.made)


def _runs_again(older: Draft, sig: UserSignals, ex: Exchange) -> bool:
    """ "today's reconciliation run" the next morning: the same words as finished work, on a
    later day, ask for a new run of it (a new intent), unless the turn reports on that work."""
    return ex.gap_before and _finished(older) and not _reports_on(sig, older, ex.text)


def _asks_again(st: _State, sig: UserSignals, ex: Exchange) -> bool:
    """After a day-scale pause, the person's own words for finished work, more than for the
    work in hand: a routine asked for again ("today's reconciliation run pls")."""
    cur = st.current
    if not sig.words or cur is None:
        return False
    mine = len(sig.words & cur.user_words)
    for draft in st.drafts[-_LOOKBACK:]:
        shared = len(sig.words & draft.user_words)
        if draft is not cur and 2 * shared >= len(sig.words) and shared > mine:
            return _runs_again(draft, sig, ex)
    return False


def _route(st: _State, ex: Exchange, sig: UserSignals) -> tuple[str, Draft | None]:
    cur = st.current
    if cur is None:
        return ("new", None)
    owner = _ref_owner(st, sig)
    if owner is not None:
        # a numbered PR or issue names its work exactly, whatever else the turn shares
        return ("continue", cur) if owner is cur else ("resume", owner)
    if sig.resume or ex.gap_before or sig.pivot_strong:
        older, score = _best_older(st, sig.words)
        here = cur.sim(sig.words)
        if (
            older is not None
            and ((sig.resume and score > here) or score >= CONTINUES > here)
            and not _adds_beside(older, sig, ex.text)
            and not _runs_again(older, sig, ex)
        ):
            return ("resume", older)
        if ex.gap_before and _asks_again(st, sig, ex):
            return ("new", None)  # a new run of finished work, not more of the work in hand
    if sig.pivot_strong:
        return ("new", None)
    if ex.answers and len(sig.words) <= _ANSWER_WORDS and "?" not in ex.text and not sig.prevent:
        # a short reply to the assistant's question answers it, in any language (a turn
        # with a question of its own may be raising something else)
        return ("continue", cur)
    if ex.after_compaction or (sig.correction and not _corrects_elsewhere(sig, cur)):
        return ("continue", cur)
    if (cur.settled or cur.closed) and sig.prevent and not (sig.continuation or sig.resume):
        # "why did it leave the lock behind? make sure that can't happen again" once the
        # incident is settled: a guard is a deliverable of its own, however many words it shares
        return ("new", None)
    owner = _owner_elsewhere(st, sig, ex.text)
    if owner is not None and not owner.dropped:
        return ("resume", owner)  # "and merge the CI change" while the migration is current
    if cur.closed or cur.dropped or (ex.gap_before and (cur.settled or cur.made)):
        # A close ends the work: anything substantial that is not about it is new. After a
        # night's pause, so does finished work; work still open is judged like any turn.
        short = len(sig.words) < 2 and not (ex.gap_before and sig.words - cur.vocab)
        if _continues_closed(sig, cur, ex.text, gap=ex.gap_before) or short:
            return ("continue", cur)
        return ("new", None)
    sim = cur.sim(sig.words)
    # "use redis for the counter, not the default cache" refines the work in hand: an order
    # led by a verb that adjusts ("use", "keep", "run") rather than one that starts work.
    refines = sig.work_order and not sig.new_work
    if (
        cur.settled
        and not refines
        and (not sig.question or sim < _NEW_TOPIC)
        and len(sig.words) >= 3
        and not cur.related(sig.words)
        and not _points_back(sig)
    ):
        return ("new", None)  # the last work was finished and this is about something else
    if sig.continuation or sig.option_pick or sig.ack or sig.question:
        return ("continue", cur)
    if sig.pivot_weak and sim < _NEW_TOPIC and not sig.anaphora and not refines:
        return ("new", None)
    if (
        (sig.new_work or (ex.gap_before and sig.work_order))
        and len(sig.words) >= 3
        and sim < _NEW_TOPIC
        and not (sig.refers_back or sig.resume)
    ):
        # an unmarked request about something else entirely; after a night's pause any
        # request sharing nothing with the open work is one
        return ("new", None)
    return ("continue", cur)


def _drop_target(st: _State, sig: UserSignals) -> Draft | None:
    live = [d for d in st.drafts[-_LOOKBACK:] if not d.dropped]
    if not live:
        return None
    cur = st.current if st.current in live else live[-1]
    best = max(live, key=lambda d: len(sig.words & d.user_words))
    return best if len(sig.words & best.user_words) > len(sig.words & cur.user_words) else cur


def _declines_a_part(cur: Draft, text: str) -> bool:
    """ "forget the rollback idea": the dropped piece was only ever offered, never asked for
    in the person's words, so declining it leaves the work as it is."""
    m = lx.DROP_PART.search(text.lower())
    named = content_words(m.group("obj")) if m else frozenset()
    return bool(named) and not named & cur.user_words


def _keeps_going(st: _State, sig: UserSignals, rest: str) -> bool:
    """ "hold off on the consumer change ... just write up what you found": the drop names a
    piece of the work and the rest of the turn asks for more of the same work."""
    cur = st.current
    if cur is None or cur.dropped or not sig.drop_part or lx.INSTEAD.search(rest.lower()):
        return False
    after = classify(rest)
    return (
        after.refers_back
        or after.anaphora
        or after.close_request
        or after.continuation
        or bool(after.words & cur.vocab)
    )


def _handle_drop(st: _State, ex: Exchange, sig: UserSignals, prev: _Pending | None) -> None:
    rest = split_after_drop(ex.text)
    # "forget it, not this sprint. revert": undoing the dropped work is part of the drop
    new_work = bool(rest) and is_work_order(rest) and not _UNDO_ONLY.match(rest)
    cur = st.current
    if prev is None and cur is not None and not cur.dropped and sig.drop_item:
        # one item of the batch is skipped; the batch, and the intent, go on
        st.place(cur, ex, sig, Role.SPAN)
        if new_work:
            st.open(ex, classify(rest), text=rest)
        return
    if prev is None and cur is not None and sig.drop_part:
        if new_work and _keeps_going(st, sig, rest):
            st.place(cur, ex, sig, Role.WORK)
            return
        if not cur.dropped and _declines_a_part(cur, ex.text):
            st.place(cur, ex, sig, Role.SPAN)
            if new_work:
                st.open(ex, classify(rest), text=rest)
            return
    if prev is not None:
        st.pending.remove(prev)  # "let's leave it there": the idea never became work
        cur = st.current
        if cur is not None and not (cur.closed or cur.dropped):
            st.place(cur, ex, sig, Role.SPAN)
    else:
        target = _drop_target(st, sig)
        if target is not None:
            # Without new work in the same turn, the reply (a revert, say) belongs here.
            st.place(target, ex, sig, Role.DROP, replies=() if new_work else ex.replies)
    if new_work:
        st.open(ex, classify(rest), text=rest)


def _retract_opening(st: _State, ex: Exchange) -> bool:
    """ "Ignore my last message" right after a turn that opened an intent: it never was one."""
    cur = st.current
    if cur is None or cur is not (st.drafts[-1] if st.drafts else None):
        return False
    work = [e for e in cur.entries if e.role is Role.WORK]
    if len(work) != 1 or work[0].turn != ex.turn - 1 or cur.closed:
        return False
    if any(ev.kind is Ev.CHANGE for r in work[0].replies for ev in reply_evidence(r)):
        return False  # something was already done about it: that is a drop, not a retraction
    st.drafts.pop()
    for turn in cur.turns:
        if st.by_turn.get(turn) is cur:
            del st.by_turn[turn]
    st.current = st.before_open
    return True


def segment(exchanges: Sequence[Exchange]) -> list[Draft]:
    """Intents in order of first appearance."""
    st = _State()
    last_pending: _Pending | None = None
    for ex in exchanges:
        sig = classify(ex.text)
        prev, last_pending = last_pending, None
        if ex.repeat_of is not None:
            target = st.by_turn.get(ex.repeat_of)
            if target is not None and ex.gap_before and _finished(target):
                # Days later, a finished routine asked again is a new run: a new intent.
                st.open(ex, sig)
                continue
            if target is not None:
                # Same day: a resend, never insistence. Days later, unfinished: resumed.
                role = Role.WORK if ex.gap_before else Role.RESEND
                st.place(target, ex, sig, role)
                st.current = target if ex.gap_before else st.current
                continue
            if prev is not None and not ex.gap_before:
                prev.items.append((ex, sig))
                last_pending = prev
                continue
        if sig.feasibility:
            question = _Pending(ex.turn, set(sig.words), [(ex, sig)])
            st.pending.append(question)
            last_pending = question
            cur = st.current
            if cur is not None and not (cur.closed or cur.dropped or ex.gap_before):
                st.place(cur, ex, sig, Role.SPAN)
            continue
        if prev is not None and not sig.work_order and not sig.pivot_strong:
            if sig.drop:
                _handle_drop(st, ex, sig, prev)
                continue
            if sig.question:
                prev.items.append((ex, sig))
                prev.words |= sig.words
                last_pending = prev
                cur = st.current
                if cur is not None and not (cur.closed or cur.dropped):
                    st.place(cur, ex, sig, Role.SPAN)
                continue
        if sig.drop:
            _handle_drop(st, ex, sig, None)
            continue
        if (
            sig.retract
            and not sig.partial_retract
            # "scratch that, just move them to the archive" replaces the ask: a correction
            and not is_work_order(split_after_drop(ex.text, lx.RETRACT))
            and _retract_opening(st, ex)
        ):
            continue  # a retraction supersedes what it retracts
        if sig.fact_only:
            if st.current is not None:
                st.place(st.current, ex, sig, Role.SPAN)
            continue
        p = _match_pending(st, sig, prev, sig.work_order or sig.continuation)
        if p is not None:
            if st.current is not None and sig.ack:
                st.current.late_accept = True
            st.open_from(p, ex, sig)
            continue
        action, target = _route(st, ex, sig)
        if action == "new":
            if not _open_ok(sig):
                continue
            if st.current is not None and sig.accept:
                st.current.late_accept = True  # "ok good. Now let's switch to ..."
            st.open(ex, sig)
        elif target is not None:
            st.place(target, ex, sig, Role.WORK)
            st.current = target
    return st.drafts
