"""What one user turn does to the work: open, continue, correct, drop, close, ask.

The classification is per turn and context-free; segmentation combines it with
what came before (the current intent, pending questions, gaps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from summaries.core.heuristic import lexicon as lx
from summaries.core.heuristic.words import content_words, refs, sentences

# A blank run before a dash is entered at its start (or just after a newline, which the
# first branch already split on), never from each of its blanks.
_CLAUSE_SPLIT = re.compile(r"[.;:!?\n]+|,\s+|(?<!\s)\s+-+\s+|(?<=\n)[^\S\n]+-+\s+|\u2014")
_FIRST_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class UserSignals:
    words: frozenset[str]
    ack: bool  # pure acknowledgement, no new ask
    accept: bool  # the person is satisfied with the result
    claims_works: bool
    user_close: bool  # the person reports a merge/ship/push
    close_request: bool
    drop: bool
    retract: bool
    partial_retract: bool
    correction: bool
    pivot_strong: bool
    pivot_weak: bool
    resume: bool
    refers_back: bool
    continuation: bool
    feasibility: bool
    question: bool  # asks for information
    work_order: bool  # imperative or polite request to do something
    problem: bool  # reports something broken (an implied request)
    new_work: bool  # a problem, or a request led by a verb that starts work (not "keep")
    followup: bool  # about review, CI or the PR of work that was just closed
    anaphora: bool  # a short turn pointing back: "add a test for it"
    fact_only: bool  # records a fact ("fyi, staging needs the VPN"); asks for nothing
    deferred_check: bool  # "I'll click through it tomorrow", "haven't checked": not verified yet
    regression: bool  # "still crashes", "14 dupes again": the result is broken after all
    drop_part: bool  # the drop names a piece of the work ("hold off on the consumer change")
    drop_item: bool  # the drop names one item of a set ("the eslint one: skip it")
    pause: bool  # "hold off on merging that": a close step waits, the work goes on
    option_pick: tuple[int, ...]


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_SPLIT.split(text) if c and c.strip()]


def _lead_verb(clause: str) -> str | None:
    rest = lx.CLAUSE_LEAD.sub("", clause.lower(), count=1)
    m = _FIRST_WORD.match(rest)
    return m.group(0) if m and m.group(0) in lx.WORK_VERBS else None


def _starts_new_work(text: str) -> bool:
    verbs = [_lead_verb(c) for c in _clauses(text)]
    return any(v in lx.NEW_WORK_VERBS for v in verbs if v)


def is_work_order(text: str) -> bool:
    """An imperative ("Add X", "please run Y") or a polite request ("can you trace it?")."""
    lowered = text.lower()
    if lx.INFO_REQUEST.search(lowered):
        return False
    for clause in _clauses(text):
        if _lead_verb(clause) is not None:
            return True
        if lx.POLITE_REQUEST.search(clause) and any(
            w in lx.WORK_VERBS for w in _FIRST_WORD.findall(clause.lower())[2:6]
        ):
            return True
    return False


# An option named by its number, its place or its letter: "2", "the second one", "b".
_PICK = re.compile(r"\b\d\b|\b(?:first|second|third|fourth)\b|(?<![\w'])[a-d]\b")
_PLACES = {"first": 1, "second": 2, "third": 3, "fourth": 4, "a": 1, "b": 2, "c": 3, "d": 4}


def option_picks(text: str) -> tuple[int, ...]:
    m = lx.OPTION_PICK.match(text.strip().lower())
    picked = _PICK.findall(m.group(0)) if m else []
    return tuple(int(p) if p.isdigit() else _PLACES[p] for p in picked)


def _leading(rx: re.Pattern[str], lowered: str) -> bool:
    """A phrase that leads the turn or one of its sentences, not one in passing."""
    for m in rx.finditer(lowered):
        if m.start() <= lx.PIVOT_LEAD_CHARS:
            return True
        before = lowered[: m.start()].rstrip(" ,")
        if not before or before[-1] in ".!?:;\n":
            return True
    return False


def _closes_in_a_sentence(text: str) -> bool:
    """ "CI is happy. merge it": a short clause of its own that asks for the close."""
    return bool(lx.CLOSE_REQUEST.match(text.lower().strip())) or any(
        len(c.split()) <= 6 and lx.CLOSE_REQUEST.match(c.lower()) for c in _clauses(text)[1:]
    )


def _after_aside(text: str) -> str | None:
    """What follows a "while we're in X:" lead, when it says something of its own."""
    stripped = text.strip()
    m = lx.ASIDE_LEAD.match(stripped.lower())
    if m is None:
        return None
    rest = stripped[m.end() :]
    return rest if len(content_words(rest)) >= 2 else None


def classify(text: str) -> UserSignals:
    lowered = text.lower().strip()
    aside = _after_aside(text)
    # the area an aside names is shared by whatever is asked in it: only its own words count
    words = content_words(aside if aside is not None else text) | refs(text)
    first = sentences(text)[0] if text.strip() else ""
    work = is_work_order(text)
    question = (
        "?" in text
        or bool(lx.QUESTION_START.match(lowered))
        or bool(lx.INFO_REQUEST.search(lowered))
    )
    feasible = bool(lx.FEASIBILITY.search(lowered)) or (
        question and bool(lx.NO_CHANGE_YET.search(lowered))
    )
    pause = bool(lx.PAUSE_STEP.search(lowered))
    item = bool(lx.DROP_ITEM.search(lowered))
    drop = (
        bool(lx.DROP.search(lowered) or item)
        and not lx.NEGATED_FORGET.search(lowered)
        and not pause
    )
    retract = bool(lx.RETRACT.search(lowered))
    picks = option_picks(text)
    close_req = _closes_in_a_sentence(text)
    regression = bool(lx.REGRESSION.search(lowered))
    problem = bool(lx.PROBLEM.search(lowered)) or regression
    starts = _starts_new_work(text)
    deferred = bool(lx.DEFERRED_CHECK.search(lowered) or lx.USER_UNVERIFIED.search(lowered))
    works = bool(lx.CLAIMS_WORKS.search(lowered) or lx.USER_VERIFIED.search(lowered))
    # a pure acknowledgement: short, and asking for nothing
    ack = (
        not (work or close_req or (question and not feasible) or drop)
        and bool(lx.ACK.search(lowered))
        and (len(text.split()) <= 8 or len(words) <= 2)
    )
    return UserSignals(
        words=words,
        ack=ack,
        accept=bool(lx.ACCEPT.search(first.lower())) and not drop,
        claims_works=works and not (regression or deferred),
        user_close=bool(lx.USER_CLOSE.search(lowered)),
        close_request=close_req,
        drop=drop,
        retract=retract,
        partial_retract=retract and bool(lx.PARTIAL.search(lowered)),
        correction=bool(lx.CORRECTION.search(lowered)),
        pivot_strong=_leading(lx.STRONG_PIVOT, lowered),
        pivot_weak=bool(lx.WEAK_PIVOT.search(lowered)),
        resume=bool(lx.RESUME.search(lowered)),
        refers_back=bool(lx.REFERS_BACK.search(lowered)),
        continuation=bool(lx.CONTINUE.match(lowered if aside is None else aside.lower()))
        or bool(picks),
        feasibility=feasible,
        question=question and not work,
        work_order=work,
        problem=problem,
        new_work=problem or starts,
        followup=bool(lx.FOLLOWUP.search(lowered)),
        anaphora=bool(lx.ANAPHORA.search(lowered)) and len(text.split()) <= 12,
        # "fyi ..., keep it that way" records a standing fact; only new work makes a goal
        fact_only=bool(lx.FACT_LEAD.search(lowered)) and not starts and "?" not in text,
        deferred_check=deferred,
        regression=regression,
        drop_part=drop and bool(lx.DROP_PART.search(lowered)),
        drop_item=drop and item,
        pause=pause,
        option_pick=picks,
    )


def split_after_drop(text: str, rx: re.Pattern[str] = lx.DROP) -> str:
    """What follows the drop's own sentence ("forget it for now. Let's do X instead")."""
    m = rx.search(text)
    if not m:
        return ""
    rest = text[m.end() :]
    stop = re.search(r"[.!?;]\s", rest + " ")
    return rest[stop.end() :].strip() if stop else ""
