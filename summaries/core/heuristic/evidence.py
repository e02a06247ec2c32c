"""Evidence in assistant replies: changes, test/build runs, closes, open ends.

Status and verified are read from this evidence, in order: a passing run only
verifies the work if it comes after the last change, and a close (commit, merge,
PR, push, deploy) ends the work whether or not anything was run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from summaries.core.heuristic.lexicon import CODE_FILE, NON_CODE_OBJECT
from summaries.core.heuristic.words import sentences

_I = re.IGNORECASE


class Ev(Enum):
    CHANGE = "change"
    DOC_CHANGE = "doc_change"  # text-only edits (PR title, changelog): nothing to run
    GREEN = "green"  # a passing test, build or run
    RED = "red"  # a failing one
    CLOSE = "close"
    OPEN = "open"  # the reply itself says something is left: "haven't run", "tests next"
    HANDOFF = "handoff"  # a step only the person can do: "you'll need to archive the flag"


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: Ev
    sentence: str


_CHANGE = re.compile(
    r"(?:^|[.;:!?\n]\s*|\band\s+|,\s*|\bthen\s+)"
    r"(?:i\s+(?:have\s+)?|i'?ve\s+|done[,:.]?\s+|ok[,:.]?\s+|right[,:.]?\s+|also\s+)?"
    r"(added|changed|updated|replaced|removed|fixed|implemented|set|bumped|converted|extracted"
    r"|switched|renamed|created|edited|wrote|rewrote|refactored|moved|wrapped|deleted|reverted"
    r"|re-applied|reapplied|applied|regenerated|generated|pointed|raised|lowered|increased"
    r"|reduced|enabled|disabled|configured|installed|dropped|made|patched|upgraded|downgraded"
    r"|migrated|introduced|adjusted|tweaked|corrected|modified|ported|restored|wired|swapped"
    r"|exported|uploaded|mounted|marked|registered|deprecated|renumbered|shortened"
    r"|restarted|rebooted|redeployed)\b"
    r"|\bnow (uses|reads|renders|stores|routes|carries|offers|writes|sends|points|imports"
    r"|calls|checks|validates|ignores|skips|handles|supports|accepts|rejects|excludes|includes"
    r"|filters|logs|waits|retries|falls back|defaults|requires|escapes|sorts|caches|batches)\b"
    r"|^\W*done\b\s*[,.:;!]",  # "Done, ..." reports the asked-for change as made
    _I,
)
_NEG = r"(?<!n't )(?<!not )(?<!never )(?<!without )"


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern run only when one of its cheap substrings occurs: most sentences carry no
    evidence, and scanning each with every alternation made long sessions slow."""

    needles: tuple[str, ...]
    rx: re.Pattern[str]

    def starts(self, sentence: str, low: str) -> list[int]:
        if self.needles and not any(n in low for n in self.needles):
            return []
        return [m.start() for m in self.rx.finditer(sentence)]


def _rule(needles: str, pattern: str, flags: int = _I) -> _Rule:
    return _Rule(tuple(needles.split("|")) if needles else (), re.compile(pattern, flags))


_GREEN = (
    _rule("passed", r"\b[1-9][\d,]*\s+(?:tests?\s+)?passed\b"),
    _rule(
        "pass|green",
        r"\b(?:tests?|suite|checks?|build|ci|pipeline|everything|all|lint|linters?|typecheck|mypy"
        r"|e2e|smoke|jobs?|runs?|workflows?|checks)\s+(?:now\s+|is\s+|are\s+)?"
        r"(?:pass|passes|passed|passing|is green|are green|green)\b|\ball green\b"
        r"|\b(?:all|both|every)\s(?:[\w.#-]+\s){0,3}(?:passed|green|passing)\b",
    ),
    _rule("succe", r"\bbuild successful\b|" + _NEG + r"\bsucceed(?:s|ed)\b|\bsuccessful(?:ly)?\b"),
    _rule(
        " is | are | was | were ",
        r"\b(?:is|are|was|were) (?:clean|ok|okay|green|present|correct|there|up)\b",
    ),
    _rule("clean|\u2713|expected", r"\bclean\b|\u2713|\bas expected\b"),
    _rule(
        "deliver|arriv|reconnect|confirm|verif|tested",
        _NEG + r"\b(?:delivered|arrived|reconnected|confirmed|verified|tested)\b",
    ),
    _rule(
        "match|return|loads|upload|rollout|applied",
        r"\bmatch(?:es)? the\b|\bnow returns\b|\breturns (?:a )?200\b|\bloads with\b"
        r"|\b(?:counts?|numbers|totals|checksums?|hashes|sums)\b[^.;]{0,20}\bmatch(?:es|ed)?\b"
        r"|\bupload ok\b|\brollout complete\b|\bapplied ok\b",
    ),
    # a health probe or a request that answered with success: "reports Healthy", "201 Created"
    _rule(
        "health|200|201|202|204",
        r"\b(?:reports?|is|are|shows?|went|now|and)\s+healthy\b|\b20[0-4] (?:ok|created|accepted"
        r"|no content)\b",
    ),
    # a run reported with its timing has run to the end: "the build is 1m38s in CI"
    _rule(
        "build|run|ci|pipeline|suite|job",
        r"\b(?:build|run|ci|pipeline|suite|job)\b[^.;]{0,30}\b(?:is|took|ran in|finished in"
        r"|now) ~?\d+(?:[.,]\d+)?\s*(?:ms|secs?|seconds?|s|mins?|minutes?|m|h)(?:\d+s)?\b",
    ),
    _rule("pass|ok", r"\bPASS(?:ED)?\b|(?<=\w )OK\b", 0),
)
# A runner's tally with failures in it, either order: "2 failed, 49 passed" (pytest, jest),
# "49 passed, 1 error".
_FAILED_N = r"[1-9][\d,]*\s+(?:tests?\s+)?(?:failed|errors?)"
_PASSED_N = r"[\d,]+\s+(?:tests?\s+)?passed"
_COUNTED_FAIL = re.compile(
    rf"\b{_FAILED_N}\b[,;]?\s+{_PASSED_N}\b|\b{_PASSED_N}\b[,;]?\s+{_FAILED_N}\b", _I
)
_RED = (
    _rule(
        "fail|error",
        # "a lockout after 5 failures", "more than 3 errors" describe settings, not a run
        r"(?<!after )(?<!than )(?<!over )(?<!max )(?<!to )(?<!of )"
        r"\b[1-9][\d,]*\s+(?:tests?\s+)?(?:failed|failures?|errors?|failing)\b"
        r"|(?<!0 )(?<!no )\b(?:failed|fails|failing)\b|\bfailures (?:are )?(?:down to|at) [1-9]",
    ),
    _rule("still", r"\bstill (?:climbing|failing|fails|broken|growing|leaking|crashing|slow)\b"),
    _rule(
        "timed out|rolled back|return|exit|match|0 rows",
        r"\btimed out\b|\brolled back\b|\breturn(?:ed|s|ing)? (?:a )?5\d\d\b"
        r"|\bexit (?:code |status )?[1-9]\b|\breturned nothing\b|\bno \w+ match\b|\b0 rows\b",
    ),
    _rule("fail", r"\bFAIL(?:ED)?\b|\bBUILD FAILED\b", 0),
    # "CI is red on the MSRV job", "the build went red"
    _rule(
        "red",
        r"\b(?:ci|build|pipeline|checks?|tests?|suite|jobs?|main)\b[^.;?]{0,20}\b(?:is|are|was"
        r"|were|went|turned|still|now) (?:still )?red\b",
    ),
)
_CLOSE = _rule(
    "committed|merged|pushed|deployed|shipped|released|published|opened|tagged|rolled out|live"
    "|went out|landed|posted|sent|emailed|delivered|pr #|mr #",
    r"(?<!\bare )(?<!\bwere )(?<!\bbe )(?<!\bbeen )(?<!\bget )(?<!\bgot )(?<!n't )(?<!not )"
    r"(?<!never )\b(?:committed|merged|pushed|deployed|shipped|released|published)\b"
    r"(?!\s+(?:synchronously|automatically|asynchronously|after|before|when|per|every|by))"
    r"|\bopened (?:a |the )?(?:draft )?(?:pr|mr|cr|pull request|merge request)\b"
    r"|\bopened #\d+|\btagged v?\d"
    # "PR #1290 against develop", "PR #287 skapad": the request exists, in any language
    r"|\b(?:pr|mr) #\d+ (?:against|into|onto|opened|created|skapad|erstellt|créée?|creado"
    r"|criado|aperta|otwarty|vytvořen\w*|oluşturuldu|aangemaakt)\b"
    # "rolled out to all pods", "it's live", "went out with the 02:00 train"
    r"|(?<!n't )(?<!not )\b(?:rolled out|went (?:out|live)|landed on (?:main|master|prod\w*))\b"
    r"|\b(?:it'?s|is|are|now) live\b(?! ?\?)"
    # "Posted to #finance-ops", "sent it to the auditors": handed to whoever reads it
    r"|(?<!n't )(?<!not )(?<!never )(?<!be )\b(?:posted|sent|emailed|delivered)\b(?: it| them| the \w+)?"
    r" (?:to|in|into) (?:#|@|the |them|him|her)"
    r"|^\W*(?:posted|sent|emailed|delivered)\b(?! (?:by|from)\b)",
)
_OPEN = re.compile(
    r"\b(?:haven'?t|have not|didn'?t|did not|not yet|never|hasn'?t|couldn'?t|can'?t|cannot"
    r"|wasn'?t able to) (?:yet )?(?:run|ran|tested|test|checked|check|confirmed|confirm|verified"
    r"|verify|benchmarked|loaded|seen|looked|measured|tried)\b"
    r"|\buntested\b|\b(?:tests?|verification|benchmark) next\b|\bnext,? i'?ll\b"
    r"|\bi'?ll (?:watch|check|monitor|verify|run|test|look)\b|\bwill (?:watch|check|monitor"
    r"|verify)\b"
    r"|\bstill running\b|\bneeds? (?:updating|to be updated|fixing|a fix|work)\b|\btodo\b"
    r"|\bchecking whether\b|\binvestigating\b|\blooking into\b|\bnot (?:on|in) \w+ yet\b"
    r"|\bscheduled (?:it |the \w+ )?for\b|\bqueued for\b|\bwill (?:go out|run|deploy|ship)\b",
    _I,
)
# A run under way has no outcome yet: "Pushed to #3302; CI is running".
_RUNNING = re.compile(
    r"\b(?:ci|tests?|suite|build|pipeline|checks?|jobs?)\b[^.;]{0,20}\b(?:is|are) (?:still )?"
    r"(?:running|pending|queued|in progress)\b",
    _I,
)
_PUSH = re.compile(r"\bpushed\b", _I)
# A run of one part ("I ran only its SELECT part") checks that part, not the change.
_PARTIAL_RUN = re.compile(
    r"\b(?:ran|run|tested|executed|checked|tried) (?:only|just) (?:its|the|a|one|that)\b"
    r"|\bonly (?:ran|tested|executed|checked|tried)\b",
    _I,
)
_HANDOFF = re.compile(r"\byou'?ll (?:need|have) to\b|\byou need to\b|\byou'?ll want to\b", _I)
_RUN_LEAD = re.compile(
    r"^\W*(?:i\s+)?(?:ran|re-?ran|retried|replayed|executed|running|run:|tried)\b"
    # "On a staging copy: no lock over 200ms" / "Applied on staging: 4ms" report a run
    r"|^\W*(?:(?:applied|tried|checked|tested)(?: it)? )?(?:on|against|in) (?:a |the )?"
    r"(?:staging|prod|production|test|local|dev)\b[^:]{0,20}:"
    r"|^\W*`[^`]+`\s*(?:->|\u2192|:)",
    _I,
)
_SHIPPING = re.compile(r"\b(deploy|release|publish|push|merge)\w*|\./deploy", _I)


def _is_doc_change(sentence: str, doc_intent: bool) -> bool:
    if NON_CODE_OBJECT.search(sentence):
        return True
    return doc_intent and not CODE_FILE.search(sentence)


def _sentence_events(sentence: str, doc_intent: bool) -> list[tuple[int, Ev]]:
    low = sentence.lower()
    found: list[tuple[int, Ev]] = []
    for m in _CHANGE.finditer(sentence):
        kind = Ev.DOC_CHANGE if _is_doc_change(sentence, doc_intent) else Ev.CHANGE
        found.append((m.start(), kind))
    fails = [p for rule in _RED for p in rule.starts(sentence, low)]
    found.extend((p, Ev.RED) for p in fails)
    # A run's tally with failures in it ("2 failed, 49 passed") is a red run, whatever
    # order it lists them in: its passed count is no green of its own.
    counted_red = bool(_COUNTED_FAIL.search(sentence))
    found.extend(
        (p, Ev.GREEN)
        for rule in _GREEN
        if not (counted_red and rule is _GREEN[0])
        for p in rule.starts(sentence, low)
    )
    # "Ran `x`: <output>" is a run that worked unless the sentence says otherwise; a
    # deploy command is the shipping itself, not a check of it.
    offset = 0
    for clause in re.split(r"(?<=;)\s+|(?<=,)\s+(?=then\b|and\b)", sentence):
        ran = _RUN_LEAD.search(clause) and not _SHIPPING.search(clause)
        if _PARTIAL_RUN.search(clause):
            found.append((offset, Ev.OPEN))
        elif ran and not any(rule.starts(clause, clause.lower()) for rule in _RED):
            found.append((offset, Ev.GREEN))
        offset += len(clause) + 1
    found.extend((p, Ev.CLOSE) for p in _CLOSE.starts(sentence, low))
    found.extend((m.start(), Ev.OPEN) for m in _OPEN.finditer(sentence))
    found.extend((m.start(), Ev.OPEN) for m in _RUNNING.finditer(sentence))
    found.extend((m.start(), Ev.HANDOFF) for m in _HANDOFF.finditer(sentence))
    found.sort(key=lambda item: item[0])
    return found


@lru_cache(maxsize=4096)
def reply_evidence(text: str, *, doc_intent: bool = False) -> tuple[Evidence, ...]:
    """Evidence found in one assistant reply, in reading order.

    Cached: segmentation and status both read every reply, and a resent question often
    gets the same reply text again; ``forget_replies`` empties the cache after a pass, so
    no transcript text outlives the call that read it.
    """
    out: list[Evidence] = []
    for sentence in sentences(text):
        for _, kind in _sentence_events(sentence, doc_intent):
            out.append(Evidence(kind, sentence))
    if any(_RUNNING.search(e.sentence) for e in out if e.kind is Ev.OPEN):
        # "Pushed to #3302; CI is running": a push waiting on its run is not a close yet (a
        # merge or a deploy is, whatever runs after it)
        out = [e for e in out if not (e.kind is Ev.CLOSE and _PUSH.search(e.sentence))]
    return tuple(out)


def forget_replies() -> None:
    reply_evidence.cache_clear()
