"""Split a session into intents: one pass over the person's turns, in order.

Each turn continues the current intent, opens a new one, resumes an older one, or is held
as a pending (feasibility) question. Resends, feasibility questions, drops, retractions
and recorded facts are handled here; every other turn is scored by ``boundary.route``. A
drop that names only one item of a batch ("the eslint one: skip it"), or only what the
assistant offered, leaves the intent going.
"""

from __future__ import annotations

from collections.abc import Sequence

from summaries.core.heuristic import lexicon as lx
from summaries.core.heuristic.boundary import asks_again, finished, route
from summaries.core.heuristic.constraints import states_rule_only
from summaries.core.heuristic.draft import LOOKBACK, Draft, Pending, Role, SegState
from summaries.core.heuristic.evidence import Ev, reply_evidence
from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.lexicon import rx
from summaries.core.heuristic.signals import (
    UserSignals,
    classify,
    is_work_order,
    split_after_drop,
)
from summaries.core.heuristic.words import content_words

_UNDO_ONLY = rx(
    r"^\W*(?:and\s+|just\s+|please\s+)*(?:revert|undo|roll ?back|discard|reset|drop)"
    r"(?:\s+(?:it|that|this|them|everything|all|the changes?|please))*\W*$"
)


def _match_pending(
    st: SegState, sig: UserSignals, prev: Pending | None, work_turn: bool
) -> Pending | None:
    cur = st.current
    for p in reversed(st.pending[-LOOKBACK:]):
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


def _drop_target(st: SegState, sig: UserSignals) -> Draft | None:
    live = [d for d in st.drafts[-LOOKBACK:] if not d.dropped]
    if not live:
        return None
    cur = st.current if st.current in live else live[-1]
    best = max(live, key=lambda d: len(sig.words & d.user_words))
    named = len(sig.words & best.user_words)
    # one shared word ("day" of "30 days") is chance; a drop that names older work names it
    # in two
    return best if named >= 2 and named > len(sig.words & cur.user_words) else cur


def _declines_a_part(cur: Draft, text: str) -> bool:
    """ "forget the rollback idea": the dropped piece was only ever offered, never asked for
    in the person's words, so declining it leaves the work as it is."""
    m = lx.DROP_PART.search(text.lower())
    named = content_words(m.group("obj")) if m else frozenset()
    return bool(named) and not named & cur.user_words


def _handle_drop(st: SegState, ex: Exchange, sig: UserSignals, prev: Pending | None) -> None:
    rest = split_after_drop(ex.text)
    # "forget it, not this sprint. revert": undoing the dropped work is part of the drop
    new_work = bool(rest) and is_work_order(rest) and not _UNDO_ONLY.match(rest)
    cur = st.current
    if (
        prev is None
        and cur is not None
        and not cur.dropped
        # one item of the batch is skipped, or a piece only offered is declined: the
        # batch, and the intent, go on
        and (sig.drop_item or (sig.drop_part and _declines_a_part(cur, ex.text)))
    ):
        st.place(cur, ex, sig, Role.SPAN)
    elif prev is not None:
        st.pending.remove(prev)  # "let's leave it there": the idea never became work
        st.aside(ex, sig)
    elif (target := _drop_target(st, sig)) is not None:
        # Without new work in the same turn, the reply (a revert, say) belongs here.
        st.place(target, ex, sig, Role.DROP, replies=() if new_work else ex.replies)
    if new_work:
        st.open(ex, classify(rest), text=rest)


def _retract_opening(st: SegState, ex: Exchange) -> bool:
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
    st = SegState()
    last_pending: Pending | None = None
    for ex in exchanges:
        sig = classify(ex.text)
        prev, last_pending = last_pending, None
        if ex.repeat_of is not None:
            target = st.by_turn.get(ex.repeat_of)
            if target is not None and ex.gap_before and finished(target):
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
            question = Pending(ex.turn, set(sig.words), [(ex, sig)])
            st.pending.append(question)
            last_pending = question
            if not ex.gap_before:
                st.aside(ex, sig)
            continue
        if prev is not None and not sig.work_order and not sig.pivot_strong:
            if sig.drop:
                _handle_drop(st, ex, sig, prev)
                continue
            if sig.question:
                prev.items.append((ex, sig))
                prev.words |= sig.words
                last_pending = prev
                st.aside(ex, sig)
                continue
        if (
            sig.retract
            and not sig.partial_retract
            # "scratch that, just move them to the archive" replaces the ask: a correction
            and not is_work_order(split_after_drop(ex.text, lx.RETRACT))
            # before the drop reading: "scratch that ..., leave it" right after the ask,
            # before any work, means it never was an intent, not that one was dropped
            and _retract_opening(st, ex)
        ):
            continue  # a retraction supersedes what it retracts
        if sig.drop:
            _handle_drop(st, ex, sig, None)
            continue
        if sig.fact_only or (not sig.work_order and states_rule_only(ex.text)):
            if st.current is not None:
                st.place(st.current, ex, sig, Role.SPAN)
            continue
        p = _match_pending(st, sig, prev, sig.work_order or sig.continuation)
        if p is not None:
            if st.current is not None and sig.ack:
                st.current.late_accept = True
            st.open_from(p, ex, sig)
            continue
        action, target = route(st, ex, sig)
        if action == "new":
            # "morning check" has no distinctive word, but a routine's new run opens one
            rerun = ex.gap_before and asks_again(st, sig, ex)
            if not (sig.words and not sig.ack) and not rerun:
                continue
            if st.current is not None and sig.accept:
                st.current.late_accept = True  # "ok good. Now let's switch to ..."
            st.open(ex, sig)
        elif target is not None:
            st.place(target, ex, sig, Role.WORK)
            st.current = target
    return st.drafts
