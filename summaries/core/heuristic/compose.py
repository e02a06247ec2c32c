"""Turn segmented, judged intents into the prompt's payload shape.

Titles and initial intents come from the person's own words in the originating
turn; progress is a short runbook of what is true now (never a history, but a
correction is always kept); next steps exist only for open work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from summaries.core.heuristic import lexicon as lx
from summaries.core.heuristic.constraints import extract_constraints
from summaries.core.heuristic.draft import Draft, Entry, Role, ranges
from summaries.core.heuristic.evidence import forget_replies
from summaries.core.heuristic.exchanges import Exchange, build_exchanges
from summaries.core.heuristic.lexicon import rx
from summaries.core.heuristic.segment import segment
from summaries.core.heuristic.signals import is_work_order
from summaries.core.heuristic.status import Verdict, judge
from summaries.core.heuristic.words import clip, content_words, sentences
from summaries.core.payload import evidence_quote
from summaries.core.transcript_turn import TranscriptTurn

_I = re.IGNORECASE
_FILLER = rx(
    r"^\W*((ok(ay)?|so|hey|hi|hmm|ugh|eh|ah|right|fine|now|next|first|also|and|then|please"
    # greetings, in the languages people write to us in: "Hello again.", "Bom dia!"
    r"|hello( again)?|hi there|(good )?morning|hallo|moin|hola|buenos d[ií]as|salut|bonjour"
    r"|bom dia|ol[áa]|ciao"
    r"|actually|instead|btw|side question|quick question|one more thing|last thing|great|nice"
    r"|good|cool|perfect|thanks|different topic|unrelated|separately|on (a|an) \w+ note"
    r"|switching to|let'?s switch to|moving on( to)?|recap|but|question|i'?m trying to"
    r" (understand|figure out)( why)?|i want to (know|understand)( why)?|i wonder( why)?)"
    r"\b[\s,.:;!-]*)+"
)
_ASK = rx(
    r"^\W*(can you|could you|would you|will you|can we|could we|please|let'?s( try)?( do)?"
    r"|i want (you )?to|i'?d like (you )?to|we need to|help me (think through|understand"
    r"|figure out)|go ahead (and|with)|look at|now let'?s( look at)?)\b[\s:]*"
)
_MAX_PROGRESS = 5
_NOT_RUN = rx(r"\b(haven'?t|not yet|didn'?t|can'?t) (yet )?(run|ran|test|tested)\b")

# A title never ends on one of these words. They are stripped one at a time from the right:
# "(\s+(word))+$" re-read the tail from every blank (quadratic); each search here enters a
# blank run at its start only.
_WEAK_WORD = rx(
    r"(?<!\s)\s+(?:the|a|an|of|to|for|from|with|in|on|at|and|or|that|this|it|instead|like"
    r"|such as|e\.g\.|de|la|le|les|des|du|der|die|das|den|el|los|las|em|para|com|und|et|y)$"
)


def _strip_weak_end(title: str) -> str:
    """``title`` without its trailing run of weak words (a title is at most ~60 chars)."""
    while (m := _WEAK_WORD.search(title)) is not None:
        title = title[: m.start()] + title[m.end() :]
    return title


def _drop_pivot(sentence: str) -> str:
    """Cut a leading pivot phrase: "Now let's look at something else: the X" -> "the X"."""
    m = lx.STRONG_PIVOT.search(sentence)
    if m is None or m.start() > 40:
        return sentence
    rest = re.sub(r"^\W*something else\b", "", sentence[m.end() :], flags=_I)
    colon = re.search(r"[:.]\s", rest)
    if colon and colon.start() < 30 and "something else" in m.group(0).lower():
        return rest[colon.end() :]
    return rest.lstrip(" ,.:;-")


# The CJK full stop, exclamation and question marks end a sentence with no space after
# them: a title is the first such sentence, never the first sixty characters of several.
CJK_STOPS = "\u3002\uff01\uff1f"
_CJK_SENTENCE_END = re.compile(r"(?<=[" + CJK_STOPS + r"])")


def _title_sentence(text: str) -> str:
    said = [p for s in sentences(text) for p in _CJK_SENTENCE_END.split(s) if p.strip()]
    cores = [_FILLER.sub("", _drop_pivot(_FILLER.sub("", s))) for s in said[:4]]
    # "Two things today. First, the 0042 migration locks orders": skip a thin preamble.
    for need in (3, 1):
        for core in cores:
            if len(content_words(core)) >= need:
                return core
    return text


_TITLE_MAX = 60
_TITLE_TRIM = " ,.;:?!-\u3001" + CJK_STOPS  # what a title never ends on
# A lead of at most four words ending in a colon, not a ticket or a path ("FOO-12: ...").
# (never a colon inside a tag or an assignment: "DB_PASSWORD=[REDACTED: credential]")
_LEAD = re.compile(r"^(?![A-Z]+-\d)[^\W\d][^:\n/`\[\]=]{0,30}?(?:\s[^\s\[\]=]+){0,3}?:\s+(?=\S)")
# Where a clause ends: punctuation, or before a word that starts a subordinate clause.
_LINKS = (
    r"(?:whose|which|that|because|so|when|where|while|if|since|but|after|before|until|unless"
    r"|although|though|then|weil|wenn|damit|porque|cuando|parce|quand)"
)
_CLAUSE_END = rx(
    # the CJK comma, enumeration comma, semicolon and colon end a clause too
    # A blank run is entered at its start only ("(?<!\s)"): from inside it the same cut
    # would be found later, after re-scanning the run from each of its blanks.
    r"(?:(?<!\s)\s+)?[,;:()\u2014\u3001\uff0c\uff1b\uff1a]\s*|(?<!\s)\s+[-\u2013]\s+"
    r"|(?<!\s)\s+(?=" + _LINKS + r"\b)"
)
# Where a phrase ends inside a clause: before a preposition or a conjunction.
_PREPS = (
    r"(?:in|on|for|with|to|from|by|of|at|into|over|under|via|and|or|than|without"
    r"|im|mit|für|von|auf|und|oder|en|con|para|de|por|y|o|dans|avec|pour|sur|et|ou|em|com)"
)
_PHRASE_END = rx(r"(?<!\s)\s+(?=" + _PREPS + r"\b)")
_ENDS_ON_LINK = rx(r"\b(?:" + _LINKS + "|" + _PREPS + r")$")

_SENTENCE_END = re.compile(r"(?<=\w)[.?!:]\s|\s[\u2014-]\s")


def _in_brackets(text: str, at: int) -> bool:
    """Inside "[...]": a redaction tag ("[REDACTED: credential]") is never split."""
    return text.count("[", 0, at) > text.count("]", 0, at)


def fit_phrase(core: str) -> str:
    """``core`` if it fits, else its longest prefix that ends a clause, else one that ends a
    phrase, so a title is never cut mid-phrase ("... drops rows whose customer name has")."""
    if len(core) <= _TITLE_MAX:
        return core
    for boundary in (_CLAUSE_END, _PHRASE_END):
        heads = [
            core[: m.start()]
            for m in boundary.finditer(core)
            # never inside brackets: a cut must not split a "[REDACTED: ...]" tag
            if 0 < m.start() <= _TITLE_MAX and not _in_brackets(core, m.start())
        ]
        heads = [
            h
            for h in heads
            if len(content_words(h)) >= 2 and not _ENDS_ON_LINK.search(h) and _balanced(h)
        ]
        if heads:
            return heads[-1]
    cut = core[: _TITLE_MAX + 1]
    spaces = [i for i, c in enumerate(cut) if c == " " and _balanced(cut[:i])]
    return cut[: spaces[-1]] if spaces else cut[:_TITLE_MAX]


def _balanced(head: str) -> bool:
    """No bracket or code quote left open: "exports for 2025 (csv in s3" is cut inside one."""
    return head.count("(") <= head.count(")") and head.count("`") % 2 == 0


def title_for(text: str) -> str:
    """A short title in the person's own terms, from the turn that started the work."""
    core = _title_sentence(text)
    m = lx.FEASIBILITY.search(core)
    if m:
        core = re.sub(r"^\W*(to\s+)?(also\s+)?", "", core[m.end() :])
    core = _ASK.sub("", _FILLER.sub("", core)).strip()
    lead = _LEAD.match(core)
    said = len(content_words(lead.group(0))) if lead else 0
    if (
        lead
        and said <= 2
        and said < len(content_words(core[lead.end() :]))
        and not is_work_order(lead.group(0))  # "fix the parser: it drops rows" is the ask
    ):
        # "what I actually need: /plans should 301", "Übrigens: ...": a short lead only
        # announces the ask, in any language
        core = _ASK.sub("", core[lead.end() :]).strip()
    ends = [
        m.start() + 1 for m in _SENTENCE_END.finditer(core) if not _in_brackets(core, m.start())
    ]
    head = core[: ends[0]].rstrip(" .?!:-\u2014") if ends else core
    if len(content_words(head)) >= 2:
        core = head
    words = core.split()
    fitted = fit_phrase(core.rstrip(" ,.;:?!-"))
    title = _strip_weak_end(fitted).rstrip(_TITLE_TRIM)
    if _ENDS_ON_LINK.search(title) or not title:
        # "look into it" is not "look into": keep the weak word that completes the phrase
        title = fitted.rstrip(_TITLE_TRIM)
    if title[:1].islower() and not re.search(r"[_/`\d]", words[0] if words else "_"):
        title = title[:1].upper() + title[1:]
    return title or clip(text, 60)


def _initial_intent(draft: Draft, origin: Entry) -> str:
    request = next((e for e in draft.entries if e.role is Role.WORK), draft.entries[0])
    first = clip(" ".join(sentences(origin.text)[:2]), 240)
    if request is origin or request.turn == origin.turn:
        return first
    return f"{first} Then, at turn {request.turn}: {clip(request.text, 160)}"


def _picked_options(draft: Draft) -> list[str]:
    out: list[str] = []
    for previous, entry in zip(draft.entries, draft.entries[1:], strict=False):
        if not entry.sig.option_pick:
            continue
        offered = {
            int(m.group(1) or m.group(2) or 0) or i + 1: m.group(3)
            for i, m in enumerate(lx.OPTION_LINE.finditer("\n".join(previous.replies)))
        }
        out.extend(
            f"Chose option {n}: {clip(offered[n], 120)}"
            for n in entry.sig.option_pick
            if n in offered
        )
    return out


def _progress(draft: Draft, v: Verdict) -> list[str]:
    lines: list[str] = []
    if v.status == "abandoned" and v.drop is not None:
        lines.append(f"Dropped at turn {v.drop.turn}: {clip(v.drop.text, 140)}")
    if v.last_close:
        lines.append(clip(v.last_close, 160))
    live = v.status != "abandoned" and not v.informational  # nothing was run in a Q&A
    if v.verified is True and v.confirmed_by is not None:
        lines.append(
            f"You confirmed it (turn {v.confirmed_by.turn}): {clip(v.confirmed_by.text, 120)}"
        )
    elif v.verified is True and v.last_pass and v.last_pass != v.last_close:
        lines.append(f"Verified: {clip(v.last_pass, 150)}")
    elif v.deferred is not None and live:
        lines.append(
            f"Not checked yet; you said (turn {v.deferred.turn}): {clip(v.deferred.text, 110)}"
        )
    elif v.last_run_green is False and v.last_fail and live:
        lines.append(f"Last run failed: {clip(v.last_fail, 140)}")
    elif v.code_changed and live and v.verified is not True:
        lines.append("Not run since the last change.")
    for d in v.decisions[-1:]:
        lines.append(f"Decided (turn {d.turn}): {clip(d.text, 140)}")
    if v.last_change and v.last_change not in (v.last_close, v.last_pass):
        lines.append(clip(v.last_change, 160))
    if v.informational and not v.decisions:
        last = next((e for e in reversed(draft.entries) if e.replies), None)
        if last is not None:
            said = [s for s in sentences(last.replies[-1]) if len(s.split()) > 4 and s[-1] != ":"]
            lines.append(f"Answered: {clip((said or [last.replies[-1]])[0], 150)}")
    lines.extend(_picked_options(draft))
    # A correction is the highest-value signal per character: the cap never drops one.
    fixes = [f"Correction (turn {e.turn}): {clip(e.text, 140)}" for e in v.corrections[-2:]]
    unique = list(dict.fromkeys(lines))
    room = max(0, _MAX_PROGRESS - len(fixes))
    return unique[:room] + fixes


def _step(what: str, why: str, expect: str) -> dict[str, str]:
    return {"what": what, "why": why, "expect": expect}


def _next_steps(draft: Draft, v: Verdict) -> list[dict[str, str]]:
    steps: list[dict[str, str]] = []
    if v.status == "completed" and v.verified is False:
        how = clip(v.last_close or v.last_change or "The work", 120)
        why = f"Finished without a passing run after the last change: {how}"
        expect = "A pass confirms it is done; a failure reopens this intent"
        steps.append(_step("Run the tests or check the result live", why, expect))
    elif v.status == "active":
        if v.last_run_green is False and v.last_fail:
            what, why = "Fix what the last run reports", f"It failed: {clip(v.last_fail, 140)}"
            expect = "The same run passes"
        elif v.open_note and v.code_changed and _NOT_RUN.search(v.open_note):
            what, why = "Run the tests for the change", clip(v.open_note, 150)
            expect = "A passing run"
        elif v.open_note:
            # the open end itself, never a placeholder ("Pick up what was left open")
            what, why = clip(v.open_note, 150), "The last reply left this open"
            expect = "That step done, then a passing run"
        elif v.code_changed:
            what, why = "Run the tests for the change", "Changed but not run since"
            expect = "A passing run"
        else:
            asks = [e for e in draft.entries if e.role is Role.WORK and not e.sig.ack]
            ask = asks[-1] if asks else draft.entries[-1]
            what = f"Continue: {clip(ask.text, 120)}"
            why, expect = (
                f"Asked at turn {ask.turn}; no result reported yet",
                "The asked-for result",
            )
        steps.append(_step(what, why, expect))
    if v.status != "abandoned":
        for handoff in v.handoffs[-2:]:
            steps.append(_step(clip(handoff, 140), "Only you can do this", ""))
    return steps


# The longest closing paragraph read for a question followed by its consequences.
_PENDING_TAIL = 600


def pending_decision(exchanges: Sequence[Exchange]) -> tuple[int, str] | None:
    """The session's last word is the assistant's question or its options, unanswered.

    Structure only: a reply whose last paragraph ends with a question mark (any
    language: "?", "¿...?"); offered options end with one ("Which do you prefer?"),
    a numbered list alone is as often advice. Returns the person turn it answered and
    the question.
    """
    if not exchanges or not exchanges[-1].replies:
        return None
    last = exchanges[-1]
    reply = last.replies[-1].strip()
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", reply) if p.strip()]
    if not paragraphs:
        return None
    tail = paragraphs[-1].rstrip("*_` )")
    asked = sentences(tail)
    if tail.endswith("?"):
        return last.turn, (asked[-1] if asked else tail)
    # "does the rollup recompute every day? If it does, I'd add ...; if not, it stands": the
    # question the answer waits on, followed only by what each answer would change
    questions = [s for s in asked[-3:] if s.rstrip("*_` )").endswith("?")]
    if questions and len(tail) <= _PENDING_TAIL:
        return last.turn, questions[-1]
    return None


# --- why an intent has its state: the one row whose evidence decided it (status decides,
# this reads back where that evidence stood so the panel can link to the row) ---------

# turn -> (the person row's stamp, ((reply text, its row's stamp), ...))
Stamps = dict[int, tuple[str | None, tuple[tuple[str, str | None], ...]]]


def stamps(exchanges: Sequence[Exchange]) -> Stamps:
    return {ex.turn: (ex.raw_ts, tuple(zip(*ex.with_notes(), strict=False))) for ex in exchanges}


def _ts(where: tuple[int, str | None], table: Stamps) -> str | None:
    turn, reply = where
    user_ts, replies = table.get(turn, (None, ()))
    if reply is None:
        return user_ts
    # the latest reply with that text: the verdict keeps the latest evidence
    found = [ts for text, ts in replies if text == reply]
    return found[-1] if found else user_ts


def _cite(kind: str, where: tuple[int, str | None], quote: str, table: Stamps) -> dict[str, object]:
    return {"turn": where[0], "ts": _ts(where, table), "kind": kind, "quote": evidence_quote(quote)}


def intent_evidence(
    v: Verdict, pending: tuple[int, str] | None, table: Stamps
) -> dict[str, object] | None:
    """``{turn, ts, kind, quote}`` for the evidence behind ``v``'s state, else None."""
    if v.status == "abandoned":
        drop = v.drop or v.discarded_by
        if drop is None:
            return None
        return _cite("dropped", (drop.turn, None), drop.text, table)
    if pending is not None:
        replies = table.get(pending[0], (None, ()))[1]
        last = (pending[0], replies[-1][0] if replies else None)
        return _cite("pending_decision", last, pending[1], table)
    if v.verified is True:
        confirmed = v.confirmed_by
        if confirmed is not None and (v.pass_at is None or v.pass_at[0] <= confirmed.turn):
            return _cite("user_confirmed", (confirmed.turn, None), confirmed.text, table)
        if v.pass_at is not None and v.last_pass:
            return _cite("test_passed", v.pass_at, v.last_pass, table)
        return None
    if v.verified is False:
        if v.last_run_green is False and v.fail_at is not None and v.last_fail:
            return _cite("test_failed", v.fail_at, v.last_fail, table)
        if v.deferred is not None:
            return _cite("user_deferred", (v.deferred.turn, None), v.deferred.text, table)
        if v.status == "completed" and v.close_at is not None and v.last_close:
            return _cite("merged_unverified", v.close_at, v.last_close, table)
    return None


def _intent(
    draft: Draft, pending: tuple[int, str] | None, table: Stamps, moved_on: bool
) -> dict[str, object]:
    v = judge(draft, moved_on=moved_on)
    steps = _next_steps(draft, v)
    if pending is not None and v.status != "abandoned":
        # An open question or offered options: the person decides next, never Done.
        if v.status == "completed":
            v.status = "active"
            steps = [s for s in steps if not s["what"].startswith("Run the tests or check")]
        what = f"Answer the open question: {clip(pending[1], 140)}"
        why = f"Asked after turn {pending[0]}; no answer yet"
        steps.insert(0, _step(what, why, "The work continues with the option you pick"))
        steps = [s for s in steps if not s["what"].startswith("Continue:")]
    origin = next((e for e in draft.entries if e.turn == draft.origin), draft.entries[0])
    return {
        "title": title_for(origin.text),
        "ranges": ranges(draft),
        "status": v.status,
        "verified": v.verified,
        "origin_turn": draft.origin,
        "initial_intent": _initial_intent(draft, origin),
        "progress": _progress(draft, v),
        "next_steps": steps,
        # after the pending-question override above, so it cites what the status says
        "evidence": intent_evidence(v, pending if v.status != "abandoned" else None, table),
    }


def summarize_turns(turns: Sequence[TranscriptTurn]) -> dict[str, object]:
    """The raw payload in the prompt's JSON shape, from the extracted turns alone."""
    exchanges = build_exchanges(turns)
    try:
        drafts = segment(exchanges)
        pending = pending_decision(exchanges)
        table = stamps(exchanges)
        newest = max((d.origin for d in drafts), default=0)  # the last goal opened
        return {
            "intents": [
                _intent(
                    d,
                    pending if pending and pending[0] in d.turns else None,
                    table,
                    newest > max(d.turns),
                )
                for d in drafts
            ],
            "constraints": extract_constraints(exchanges),
        }
    finally:
        forget_replies()
