"""Session constraints: operational facts the person stated or corrected.

Only the person's own words qualify (a required flag, a step that must follow a
change, a corrected name, who owns what, where a service listens), never the
assistant's, never automation, never a resend. The latest statement of a fact
wins: a later constraint that names the same flag, port or identifier replaces
the earlier one, so a renamed flag never survives under its old name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.lexicon import FACT_LEAD, NO_CHANGE_YET
from summaries.core.heuristic.rule_shapes import (
    DONT_TOUCH,
    EVERY_RUN,
    MAKES_STANDING_ANY,
    NOT_WORDS,
    TO_DO,
    states_shaped_rule,
)
from summaries.core.heuristic.signals import is_work_order
from summaries.core.heuristic.value_fixes import FACT_SPLIT as _FACT_SPLIT
from summaries.core.heuristic.value_fixes import KEY as _KEY
from summaries.core.heuristic.value_fixes import corrects_value, value_correction
from summaries.core.heuristic.words import clip, content_words, sentences

MAX_CONSTRAINTS = 5  # "at most a handful": a long list stops being read

_I = re.IGNORECASE
_FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*|(?<![\w-])-[a-zA-Z]\s+[\w./-]+")
_REQUIRE = re.compile(
    r"\b(always|must|have to|has to|need to|needs to|required|requires|make sure|remember to"
    r"|don'?t forget|or (else )?(it|they)\b|otherwise|only works with)\b",
    _I,
)
_NAME_FIX = re.compile(
    r"\b(it'?s|is called|named|is)\s+`?[\w./:@-]+`?,?\s+not\s+`?[\w./:@-]+"
    r"|\b(got|was|been|is) renamed\b|\bis `[^`]+` now\b|\b(was|got|been) (removed|replaced)\b"
    r"|\b(is|are) (now )?(called|named) [\w./:@`-]+( now)?\b|\bnow (called|named)\b"
    r"|\b(we|i|they|it got|was) renamed (\S+ ){0,2}to\b"
    r"|\b(isn'?t|is not|aren'?t|are not) (called|named) \S+,? (it'?s|they'?re)\b",
    _I,
)
# "we always run tests with `make test`, never bare pytest": a standing rule about a command.
# The words for "always" and "never" in the languages people write to us in (a thin layer:
# the command or flag beside them is what makes the sentence a rule).
_ALWAYS_WORDS = (
    r"always|never|only ever|must always|must never|immer|niemals|nie|toujours|jamais"
    r"|siempre|nunca|sempre|mai"
)
_ALWAYS_NEVER = re.compile(
    rf"\b({_ALWAYS_WORDS})\b[^.;]{{0,60}}(`[^`]+`|(?<![\w-])--?[a-z][\w-]+)"
    # "se fait avec `./deploy.sh staging`, jamais avec kubectl": the command, then the word
    rf"|(`[^`]+`|(?<![\w-])--[a-z][\w-]+)[^.;]{{0,12}}\b({_ALWAYS_WORDS})\b",
    _I,
)
# "staging deploys only work from the VPN": a condition the environment imposes.
_CONDITION = re.compile(
    r"\bonly works? (from|with|on|over|inside|behind|if|when)\b"
    r"|\b(won'?t|doesn'?t|does not|will not) work (unless|without|outside|off)\b"
    r"|\b(you have to|you need to|you must) be (on|connected|logged|inside|behind)\b"
    # "anything on *.internal is only reachable over the VPN"
    r"|\bonly (reachable|accessible|available|visible|resolvable|routable) (from|over|via"
    r"|through|inside|behind|on|with|in)\b",
    _I,
)
# "We deploy with `fab deploy:prod`", "you must run `fab db.migrate` first"
_COMMAND = re.compile(r"`[^`]+`|(?<![\w-])--?[a-z][\w-]*|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_HOW_WE_RUN = re.compile(
    r"\bwe (deploy|build|release|test|run|start|migrate|ship|publish)\w* (it )?(with|using|via"
    r"|through)\b",
    _I,
)
# A standing rule said as one: "remember prod only changes through argocd", "from now on
# ...", "make sure to ...", "we use pnpm, not npm". Only with an operational subject (an
# environment, a tool, a process), so a wish about one piece of work does not qualify.
_STANDING_LEAD = re.compile(
    r"(?<!you )(?<!do )\bremember(?! when\b| how\b| what\b| why\b| if\b)\b|\bfrom now on\b"
    r"|\bgoing forward\b|\bin (the )?future\b|\bmake sure (to|you|that|the|we)\b"
    r"|\b(always|never|must|must not|mustn'?t|has to|have to|needs to|need to)\b",
    _I,
)
_OPS = re.compile(
    r"\b(prod|production|staging|stage|ci|main|master|branch|deploy\w*|releas\w*|migrations?"
    r"|database|db|cluster|vpn|server|runners?|env|docker\w*|k8s|kubernetes|helm|argo\s?cd|argocd"
    r"|terraform|pipeline|repo|bucket|region|account|alias|registry|image|node|python|pnpm|npm"
    r"|yarn|uv|poetry|pip|make|gradle|ssh|host|port|secrets?|keys?|tokens?|lockfile|schema"
    r"|sandbox|prod\w*)\b",
    _I,
)
# "prod only changes through argocd", "only deploy via the pipeline", "don't helm upgrade
# prod directly": the one sanctioned path.
_ONLY_PATH = re.compile(
    r"\b(only|always) (\w+ ){0,2}(through|via|from|with|using|by|to)\b|\b(don'?t|never"
    r"|do not) [^.;]{0,40}\bdirectly\b"
    r"|\bwe use \S+,? not\b|\buse \S+,? (not|never) \S+",
    _I,
)
# "batch jobs run only between 01:00 and 05:00", "maintenance window is sat 23:00-02:00",
# "deploys are frozen on fridays", "only run on saturday": when something may happen.
_WINDOW = re.compile(
    r"\bonly (\w+ ){0,2}(between|after|before|during|on|at) [^.;]{0,30}"
    r"(\d{1,2}:\d{2}|\b(mon|tue|wed|thu|fri|sat|sun)\w*|weekends?|nights?)\b"
    r"|\bwindow (is|runs|opens|moved)\b[^.;]{0,20}\d{1,2}:\d{2}"
    r"|\b(frozen|freeze|no deploys?) (on|during) \w+",
    _I,
)
# "the admin interface must stay in english": a property the work must leave as it is
_MUST_STAY = re.compile(r"\b(must|has to|have to|should|needs? to) (always )?(stay|remain)\b", _I)
# "keep runs-on as it is": a standing instruction about a named setting
_KEEP_AS = re.compile(r"\bkeep [\w./:@-]+ (as (it )?is|unchanged|that way|pinned)\b", _I)
_PASTE = re.compile(r"```.*?(```|$)", re.S)
# "always", "from now on": said of every run, not of the work in hand
_EVERY_TIME = re.compile(
    r"\b(always|never|from now on|going forward|in (the )?future|whenever|every time|each time)\b",
    _I,
)
# A rule for now is not a standing fact.
_TEMPORARY = re.compile(
    r"\b(for now|for today|this time|just this once|until (the|we|i|she|he))\b", _I
)
_OWNERSHIP = re.compile(
    r"\b(?!who\b)\w+ owns? the\b|\bowned by\b|\bdon'?t touch (the|our) \w+"
    r"|\bnever (push|commit|deploy|touch|edit)\b"
    # "he owns prod airflow deploys", "finance (Marta) runs anything that touches balances"
    r"|\b(he|she|they|(?!who\b)\w+\)?) owns\b|\b(he|she|they) own (that|this|the|those)\b"
    r"|\b(runs|handles|does|approves|signs off on|reviews) (anything|everything|all|any)\b"
    r"[^.;]{0,12}\b(that|which|touching|in|on|to do with)\b",
    _I,
)
_MISTYPED = re.compile(r"\b(mistyped|misspelled|typo in the name)\b", _I)
# "always do that for these numbers": the rule is the sentence before, made standing
_MAKES_STANDING = re.compile(
    r"^\W*(and |so )?(always|from now on|going forward|every time|each time)\b[^.;]{0,20}?"
    r"\b(do|apply|keep|use) (that|this|it)\b"
    r"|^\W*(and |so )?(do|apply|keep|use) (that|this|it) (always|from now on|going forward"
    r"|every time|each time)\b",
    _I,
)
_PRONOUN_LEAD = re.compile(r"^\W*(he|she|they|it)\b", _I)
# "don't touch .gitlab-ci.yml, infra owns it": the object is in the clause before
_OWNS_PRONOUN = re.compile(r"^\W*\w+ owns? (it|that|this|them)\b", _I)

_PORT_FACT = re.compile(
    r"\b(should|must|always|moved|now|lives?|listens?)\b[^.;]{0,40}\b(on|to|at) (port )?\d{4,5}\b",
    _I,
)
_LEAD = re.compile(
    r"^\W*((you forgot|reminder|note|fyi|also|and|oh|ok|okay|so|btw|actually|wait|reviewer says)\b"
    r"[\s:,.-]*)+",
    _I,
)


def _clause(sentence: str, at: int) -> str:
    """The clause holding position ``at``; with a pronoun for a subject ("he owns prod
    deploys"), the clause before it too, which names who that is."""
    cuts = [sentence.rfind(sep, 0, at) for sep in (", ", "; ", ": ")]
    start = max(cuts)
    if start < 0:
        return sentence
    clause = sentence[start + 2 :]
    if _PRONOUN_LEAD.match(clause) or _OWNS_PRONOUN.match(clause):
        before = max(sentence.rfind(sep, 0, start) for sep in (", ", "; ", ": "))
        return sentence[before + 2 :] if before >= 0 else sentence
    return clause


_ASKS = re.compile(
    r"^\W*(?:why|does|do|did|is|are|was|were|can|could|should|would|what|how|which|where"
    r"|when|who|any idea|is there)\b",
    re.IGNORECASE,
)


def _asked(sentence: str, turn_text: str) -> bool:
    """A question, whether or not the sentence splitter kept its mark: "does anything else
    read that column straight from raw?" states no rule, nor does "why didn't it go through"."""
    at = turn_text.find(sentence.strip())
    after = turn_text[at + len(sentence.strip()) :].lstrip()[:1] if at >= 0 else ""
    return after == "?" or bool(_ASKS.search(sentence))


def _rule(sentence: str, turn_text: str) -> str | None:
    """The constraint a sentence states, or None."""
    if sentence.rstrip().endswith("?") or _asked(sentence, turn_text):
        return None
    if NO_CHANGE_YET.search(sentence) and not DONT_TOUCH.search(sentence):
        return None  # a question or a "don't change anything" states no standing fact
    if FACT_LEAD.search(turn_text) and _KEY.search(sentence):
        return sentence  # "fyi the client points at /api/v2": flagged for later by the person
    if _FLAG.search(sentence) and (_REQUIRE.search(sentence) or _NAME_FIX.search(sentence)):
        return sentence
    if _COMMAND.search(sentence) and (_REQUIRE.search(sentence) or _HOW_WE_RUN.search(sentence)):
        return sentence
    if any(rx.search(sentence) for rx in (_NAME_FIX, _ALWAYS_NEVER, _CONDITION)):
        return sentence
    if _TEMPORARY.search(sentence) and not EVERY_RUN.search(sentence):
        return None  # "before every commit, you did it this time" is still every time
    if _KEEP_AS.search(sentence) and _KEY.search(sentence):
        return sentence
    pair = value_correction(sentence)
    if pair is not None and not is_work_order(sentence.split(",")[0]):
        return pair  # a statement, not an order ("port 6432, not 6543" is no "port X" order)
    m = _OWNERSHIP.search(sentence)
    if m:
        # "ask Minh before changing the schema, he owns that table": who owns what is a
        # standing fact even inside a request
        return _clause(sentence, m.start())
    if _WINDOW.search(sentence) or _MUST_STAY.search(sentence):
        return sentence
    if _ONLY_PATH.search(sentence) and _KEY.search(sentence):
        return sentence  # "always via the bastion, jump.example.internal"
    if states_shaped_rule(sentence, is_work_order(sentence)):
        return sentence
    fixed = corrects_value(sentence, turn_text)
    if fixed:
        return fixed
    if is_work_order(sentence) and not _EVERY_TIME.search(sentence):
        return None  # "upgrade X and make sure the migrations apply": about this work only
    if TO_DO.search(sentence) and not _EVERY_TIME.search(sentence):
        return None  # "the smsgate key must be rotated": a task, not a standing rule
    if _OPS.search(sentence) and (_ONLY_PATH.search(sentence) or _STANDING_LEAD.search(sentence)):
        return sentence
    if _PORT_FACT.search(sentence):
        return sentence
    if _MISTYPED.search(turn_text) and not _MISTYPED.search(sentence) and _KEY.search(sentence):
        return sentence  # "the bucket is acme-export, singular. I mistyped it before."
    return None


_RENAMED = re.compile(r"\b(renamed|is stale)\b", _I)
_MOVED = re.compile(r"\b(renamed|moved|is now|are now|it'?s now|changed to|now)\b", _I)
_PORT = re.compile(r"\b\d{4,5}\b")


def _keys(text: str) -> set[str]:
    keys = {k.lower().strip(".") for k in _KEY.findall(text)}
    if _WINDOW.search(text):
        keys.add("<window>")
    # A rename or move restates a fact without naming the old value ("the flag got
    # renamed, it's --no-assets now"): it supersedes the earlier fact of its kind.
    if _MOVED.search(text):
        if _FLAG.search(text):
            keys.add("<flag>")
        if _PORT.search(text):
            keys.add("<port>")
    return keys


def _kinds(text: str) -> set[str]:
    kinds = {k for k, rx in (("<flag>", _FLAG), ("<port>", _PORT)) if rx.search(text)}
    # a window stated again ("the window moved to Saturday 23:00") replaces the old one
    return kinds | ({"<window>"} if _WINDOW.search(text) else set())


# "the port is 5439, not 5432": a correction states the value that holds; the superseded one
# is left out, so a reader (or a later model) never picks up the wrong value from it.
_NOT_OLD = re.compile(
    rf"(?:(?<!\s)\s+)?(?:,|\u2014|\u2013|\s-)\s*(?:{NOT_WORDS})\s+`?[\w./:@-]+`?(?=\s*(?:[.;,)\u2014\u2013]|$))",
    _I,
)


# "... a new instance, not point-in-time recovery, because PITR has bitten us" and "`v3` not
# warehouse.old": the rejected alternative (up to four words) and the story behind it go too;
# "..., nobody runs plan from a laptop" restates the rule by the practice it forbids.
_NOT_PHRASE = re.compile(
    r"(?:(?:(?<!\s)\s+)?,\s*|(?<=`)\s+)(?:not|pas|nicht|inte|niet|ikke)\s+[\w./:@`-]+(?:\s+[\w./:@`-]+){0,3}"
    r"(?:\s*,\s*because\b.{0,400})?\s*(?=[.;]|$)",  # (".*" re-read the line per ", because")
    _I,
)
_NOBODY = re.compile(r"(?:(?<!\s)\s+)?,\s*(?:nobody|no one|noone)\b[^.;]*(?=[.;]|$)", _I)


def _shape(text: str) -> str:
    text = _NOT_OLD.sub("", _LEAD.sub("", text))
    text = _NOBODY.sub("", _NOT_PHRASE.sub("", text)).strip().rstrip(".")
    return clip(text[:1].upper() + text[1:], 160)


def _is_standing(sentence: str) -> bool:
    """Said of every run, not of the work in hand: a corrected value ("port 5439, not 5432")
    is about the work and goes with it."""
    return any(
        rx.search(sentence) for rx in (_EVERY_TIME, _ALWAYS_NEVER, _OWNERSHIP, _WINDOW, _CONDITION)
    )


def states_rule_only(text: str) -> bool:
    """The turn states a standing rule and asks nothing else ("Parfait, merci. Au fait, le
    script doit toujours tourner avec --target test-pg"): every sentence is a rule or a few
    words of thanks, whatever the language."""
    if "?" in text:
        return False
    parts = [p for s in sentences(_PASTE.sub(" ", text)) for p in _FACT_SPLIT.split(s)]
    parts = [p for p in parts if p.strip()]
    rules = [p for p in parts if _rule(p, text) is not None and _is_standing(p)]
    rest = [p for p in parts if p not in rules]
    return bool(rules) and all(len(content_words(p)) <= 2 for p in rest)


# A value with a unit: "--lock-timeout=5s" then "actually 3s".
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|m|min|h)\b", _I)


_PERSON_LEAD = re.compile(r"^\W*(he|she|they)\b", _I)
# "One note for the future, since this bit me before: migrations are ...": a preamble of
# words and no value before a colon; the rule is what follows it.
_PREAMBLE = re.compile(r"^[^:`/\n]{8,80}?:\s+(?=\S)")


def _after_preamble(rule: str) -> str:
    m = _PREAMBLE.match(rule)
    if m is None or _KEY.search(m.group(0)) or len(content_words(rule[m.end() :])) < 2:
        return rule
    return rule[m.end() :]


def _restated(text: str, last: str | None) -> str | None:
    """ "actually 3s" right after "always w/ --lock-timeout=5s": a short turn with one value
    of the kind the rule just stated holds one, and no rule of its own, corrects that value."""
    if last is None or len(text.split()) > 12 or "?" in text:
        return None
    for rx in (_DURATION, _PORT):
        said, held = rx.findall(text), rx.findall(last)
        if len(said) == 1 and len(held) == 1 and said[0] != held[0]:
            return last.replace(held[0], said[0])
    return None


def extract_constraints(exchanges: Sequence[Exchange]) -> list[str]:
    found: list[tuple[str, set[str]]] = []
    last: tuple[int, str] | None = None  # the latest rule and the turn that stated it
    for ex in exchanges:
        if ex.repeat_of is not None:
            continue  # a resend restates nothing new
        said = _PASTE.sub(" ", ex.text)  # a pasted log or trace states no rule of the person's
        parts = [p for s in sentences(said) for p in _FACT_SPLIT.split(s) if p.strip()]
        if last is not None and last[0] == ex.turn - 1 and not any(_rule(p, said) for p in parts):
            fixed = _restated(said, last[1])
            if fixed is not None:
                found = [(t, k) for t, k in found if t != last[1]]
                found.append((fixed, _keys(fixed)))
                last = (ex.turn, fixed)
                continue
        for i, sentence in enumerate(parts):
            rule = _rule(sentence, ex.text)
            if i and (
                (rule is None and _MAKES_STANDING.search(sentence))
                or MAKES_STANDING_ANY.search(sentence)
            ):
                rule = f"{parts[i - 1].strip()}; {sentence.strip()}"
            if rule is None:
                continue
            if rule == sentence and _RENAMED.search(rule) and not _KEY.search(rule):
                # "channel was renamed. its #etl-alerts now": the rename, with the name
                near = parts[i + 1] if i + 1 < len(parts) else (parts[i - 1] if i else "")
                rule = f"{sentence.strip()}; {near.strip()}" if near.strip() else rule
            rule = _after_preamble(rule)
            named = next((p for p in reversed(parts[:i]) if not is_work_order(p)), None)
            if named and _PERSON_LEAD.match(rule):
                # "Agnieszka approved #415. Please merge it. For the record: she owns ..."
                rule = f"{named.strip()}; {rule}"
            keys = _keys(rule)
            if rule != sentence and rule in sentence:
                # "gpu-07 was retired, now is gpu-11" keeps only the clause that holds, but
                # it replaces what was said of either value
                keys |= _keys(sentence)
            # the latest statement of a fact wins over every earlier one about the same thing
            found = [(t, k) for t, k in found if not (keys and (k | _kinds(t)) & keys)]
            text = _shape(rule)
            if text and all(text != t for t, _ in found):
                found.append((text, keys))
                last = (ex.turn, text)
    return [t for t, _ in found][-MAX_CONSTRAINTS:]
