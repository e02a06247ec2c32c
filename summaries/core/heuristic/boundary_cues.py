"""The boundary cues: what a turn says about the work in hand, an older intent, or neither.

Each function reads one structural or lexical cue off a turn and the segmentation state;
``boundary`` turns the cues into features and scores them. Splitting is the costlier
mistake, so a follow-up that points back at the work stays with it even when it shares few
words; merging is the other mistake, and finished work is where it happens: it must not
absorb what follows it (after a day-scale pause, finished work is picked up again only by a
turn that reports on it).
"""

from __future__ import annotations

from summaries.core.heuristic import lexicon as lx
from summaries.core.heuristic.draft import CONTINUES, Draft
from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.segstate import LOOKBACK, SegState
from summaries.core.heuristic.signals import UserSignals
from summaries.core.heuristic.words import content_words

# Share of a request's distinctive words known to the current intent below which an
# unmarked request is a new topic.
NEW_TOPIC = 0.15


def best_older(st: SegState, words: frozenset[str]) -> tuple[Draft | None, float]:
    best: Draft | None = None
    score = 0.0
    for draft in st.drafts[-LOOKBACK:]:
        if draft is st.current:
            continue
        s = draft.sim(words)
        if s > score:
            best, score = draft, s
    return best, score


def names_its_work(text: str, draft: Draft) -> bool:
    """ "raise the limit to 30/hour": a definite reference to something the person named in
    this intent, backed by a second shared word, points back at the same work."""
    named = content_words(" ".join(lx.DEFINITE.findall(text.lower())))
    words = content_words(text)
    return bool(named & draft.user_words) and len(words & draft.vocab) >= 2


def subjectless(text: str) -> bool:
    """ "still flaky", "again?": a report with no subject of its own is about the work in hand."""
    return bool(lx.SUBJECTLESS.match(text.lower()))


def continues_closed(sig: UserSignals, cur: Draft, text: str, *, gap: bool = False) -> bool:
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
        return reports_on(sig, cur, text)
    return (
        reports_on(sig, cur, text)
        or (sig.continuation and not sig.pivot_weak)
        or cur.related(sig.words)
    )


def reports_on(sig: UserSignals, cur: Draft, text: str) -> bool:
    """A turn that reports on, closes or follows up the work in hand, whatever its words."""
    return (
        sig.close_request
        or sig.user_close
        or sig.ack
        or bool(sig.option_pick)
        # "no, the other bucket" corrects the work; "the project is acme-analytics now, not
        # acme-dw. fix profiles.yml" corrects a fact about something the work never touched
        or (sig.correction and not corrects_elsewhere(sig, cur))
        or sig.resume
        or sig.deferred_check
        or sig.followup
        or sig.claims_works  # "export ran fine overnight": a report on the work just closed
        # "main is red now", "still flaky": the closed work is broken after all
        or (sig.regression and (bool(sig.words & cur.vocab) or subjectless(text)))
        or sig.refers_back
        or names_its_work(text, cur)
    )


def corrects_elsewhere(sig: UserSignals, cur: Draft) -> bool:
    """ "the project is acme-analytics now, not acme-dw. fix profiles.yml" after a merge: a
    correction that shares no word with the closed work corrects something else."""
    return cur.closed and len(sig.words) > 2 and not sig.words & cur.vocab


def points_back(sig: UserSignals) -> bool:
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


def adds_beside(older: Draft, sig: UserSignals, text: str) -> bool:
    """ "can we also rate-limit password reset? same setup": a new deliverable next to
    finished work, not a reopening of it (a problem with that work would reopen it)."""
    return (
        older.closed
        and older.settled
        and sig.work_order
        and not (sig.resume or sig.problem or sig.correction)
        and bool(lx.ADDITIVE.search(text.lower()))
    )


def owner_elsewhere(st: SegState, sig: UserSignals, text: str) -> Draft | None:
    """An older intent the turn names in the person's own words while the current shares none."""
    cur = st.current
    if cur is None or not sig.words or cur.sim(sig.words) > 0:
        return None
    older, score = best_older(st, sig.words)
    # "main went red after the flag merge": a breakage blamed on an earlier step points back
    # at that work even when it shares only a word or two with it
    bar = NEW_TOPIC if sig.regression and sig.refers_back else CONTINUES
    if older is not None and score >= bar and sig.words & older.user_words:
        return None if adds_beside(older, sig, text) else older
    return None


def ref_owner_of(st: SegState, sig: UserSignals) -> Draft | None:
    """ "#3301 got approved. merge it": the one intent where the numbers it names came up."""
    owners = {id(st.ref_owner[w]): st.ref_owner[w] for w in sig.words if w in st.ref_owner}
    return next(iter(owners.values())) if len(owners) == 1 else None


def finished(draft: Draft) -> bool:
    return not draft.dropped and (draft.closed or draft.settled or draft.made)


def runs_again(older: Draft, sig: UserSignals, ex: Exchange) -> bool:
    """ "today's reconciliation run" the next morning: the same words as finished work, on a
    later day, ask for a new run of it (a new intent), unless the turn reports on that work."""
    return ex.gap_before and finished(older) and not reports_on(sig, older, ex.text)


def asks_again(st: SegState, sig: UserSignals, ex: Exchange) -> bool:
    """After a day-scale pause, the person's own words for finished work, more than for the
    work in hand: a routine asked for again ("today's reconciliation run pls")."""
    cur = st.current
    if not sig.words or cur is None:
        return False
    mine = len(sig.words & cur.user_words)
    for draft in st.drafts[-LOOKBACK:]:
        shared = len(sig.words & draft.user_words)
        if draft is not cur and 2 * shared >= len(sig.words) and shared > mine:
            return runs_again(draft, sig, ex)
    return False
