"""Session constraints: operational facts the person stated or corrected.

Only the person's own words qualify (a required flag, a step that must follow a change, a
corrected name or value, who owns what, where a service listens), never the assistant's,
automation or a resend. Rule shapes are structural, with a thin lexicon per language: the
words alone never make a rule. The latest statement of a fact wins: a later constraint
naming the same flag, port or identifier replaces the earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.lexicon import FACT_LEAD, NO_CHANGE_YET, rx
from summaries.core.heuristic.signals import is_work_order
from summaries.core.heuristic.words import clip, content_words, sentences

_I = re.IGNORECASE

# --- standing-rule shapes ------------------------------------------------------------

# "always" / "never" across languages: with an operational word they make a standing rule
ALWAYS_NEVER_WORDS = (
    r"toujours|jamais|siempre|nunca|sempre|mai|immer|niemals|nie|altijd|nooit|alltid|aldrig"
    r"|zawsze|nigdy|vždy|nikdy|asla|daima|her zaman"
)
# "we use pnpm here", "usamos pnpm, no npm", "we use poetry btw not pip"
_WE_USE = rx(
    r"\b(we|i) (use|are using|work with)\b[^.;]{0,30}?(\b(here|in this repo|not|instead of)\b"
    r"|,\s*(no|not|pas|nicht|nie|ne|inte)\b)"
    r"|\b(usamos|utilisons|on utilise|nutzen wir|wir nutzen|verwenden wir|używamy|používáme"
    r"|kullan\u0131yoruz|gebruiken we|vi använder)\b[^.;]{0,30}?(,\s*(no|not|pas|nicht|nie|ne|inte)"
    r"|\b(aquí|ici|hier|tutaj|zde|här|burada|qui))\b"
)
# "tutto passa da Atlantis", "ça passe toujours par le pipeline", "goes through Ilse",
# "her şey ArgoCD üzerinden gidiyor", "everything goes in the ansible roles", "gitops only"
_PATH = rx(
    r"\b(goes|go|passes|pass|runs?|happens?) (only )?(through|via)\b|\bpassa da\b"
    r"|\bpass(e|ent) (toujours |uniquement )?par\b|\büzerinden\b|\bläuft (immer )?über\b"
    r"|\beverything (goes|go|lives|belongs) (in|into|through|via|to)\b"
    # (a leading "-" run belongs to the name, never to both: "\W*" alone re-split it)
    r"|^(?:\W*[^\w-])?[\w-]+ only\s*(,|$)"
)
# "never ... by hand", "non fare mai ... in locale", "手でALTERしないで", "elle ... yapma"
_BY_HAND = rx(
    r"\b(by hand|manually|à la main|a mano|in locale|von hand|händisch|ręcznie|ručně|elle"
    r"|för hand|from a laptop|vanaf een laptop)\b|手で"
)
_NEGATION = rx(
    rf"\b(never|don'?t|dont|do not|no|not|{ALWAYS_NEVER_WORDS}|nicht|kein|ne|non|yapma|inte"
    r"|nie|ani)\b|しないで|ないで"
)
# "no apply before I see the plan", "Kein apply bevor ich den Plan gesehen habe",
# "visa mig innan du gör apply", "show me before apply": a gate before an irreversible step
_GATE = rx(
    r"\b(before|bevor|avant que|antes de que|prima che|innan|zanim|než|until)\b[^.;]{0,30}"
    r"\b(i|ich|je|yo|io|jag|ja|me|mig|mir|moi)\b[^.;]{0,20}\b(see|seen|gesehen|vu|visto|sett"
    r"|zobaczę|approve|ok|okay|review)\w*"
    r"|\b(show me|zeig mir|visa mig|montre-moi|muéstrame|mostrami|pokaż mi)\b[^.;]{0,40}"
    r"\b(before|bevor|innan|avant|antes|prima|zanim)\b"
)
# "MSRV is 1.74", "MSRV zostaje 1.74", "our minimum is iOS 15", "minSdk is actually 26",
# "we stay on java 21": a version the work may not go past
_PIN = rx(
    r"\b(msrv|minsdk|min sdk|min(imum)? (version|sdk)|our minimum|rust-version|target sdk)\b"
    r"[^.;]{0,25}\d+(\.\d+)*"
    r"|\bwe (stay|are staying|remain) on [a-z]+ \d+(\.\d+)*\b"
)
# "without asking me first", "bez uzgodnienia", "ohne Rücksprache": a permission rule
_WITHOUT_ASKING = rx(
    r"\bwithout (asking|checking with|telling|my ok|approval|review)\b|\bbez uzgodnienia\b"
    r"|\bohne rücksprache\b|\bsans (demander|validation)\b|\bsin (preguntar|consultar)\b"
)
# "make lint before every commit", "like always", ", ever", "no exceptions"
EVERY_RUN = rx(
    r"\b(before|after) (every|each|any) \w+|,\s*ever\b"
    r"|\bno exceptions\b"
)
# "migrations are expand/contract here", "benchmarks use criterion", "all index changes go
# through Ilse", "every architectural decision gets an ADR": how a kind of thing is done here
_HOW_HERE = rx(
    r"\b(tests|benchmarks|migrations|deploys|deployments|releases|builds|commits|commit messages?"
    r"|prs|secrets|schema changes|index changes)\b (here )?(always )?(uses?|go|goes|runs?|needs?|must"
    r"|lives?|gets?|are [^.;]{0,30}\bhere)\b"
    r"|\bevery [\w ]{0,25}? (gets|goes|needs|must|has to)\b"
    # "all clinics are in Europe/Vienna"
    r"|\ball \w+ (are|is|run|live) (in|on|at) \w+[/.-]\w"
)
# "must come from the i18n file", "måste ha taggen cost-center", "needs to sit behind the
# FeatureFlags system": where a thing must come from or live
_MUST_PLACE = rx(
    r"\b(must|needs? to|has to|have to|måste|muss|doit|debe|deve|musi|musí)\b (\w+ ){0,1}"
    r"(come from|come out of|go (through|in|into|via)|live in|sit behind|be behind|ha|haben"
    r"|have the|have a tag|use)\b"
)
# "don't touch build numbers, fastlane does that", "src/legacy no se toca"
DONT_TOUCH = rx(
    r"\b(don'?t|dont|do not|never) touch (?!anything|it\b|that\b|this\b|yet\b)[\w.`/]|\bno se toca\b|\bnicht anfassen\b|\bne touche pas\b"
    r"|\bnon toccare\b|\bnie ruszaj\b|\bnesahej\b|\bniet aanraken\b|\bpas y toucher\b"
    r"|\bne (?:pas|jamais) (?:y )?toucher\b|\bhaath mat lagana\b|\bmat chhedna\b|건드리지 마"
    r"|触らないで|不要(?:碰|动|改)"
)
# "no X in library code, only in tests", "žádné unwrap v knihovním kódu, jen v testech"
_NONE_BUT = rx(
    r"\b(no|žádné|žádný|keine?|aucun|ningún|nessun|żadnych|inga|hiç)\b [^.;,]{1,40},\s*"
    r"(only|jen|nur|seulement|solo|tylko|bara|sadece)\b"
)

# "always" / "never" / "from now on" in the scripts that have no word boundaries or are
# often written without the Latin words above: Japanese, Korean, Chinese, Russian,
# Vietnamese and romanized Hindi. With a named thing beside it (an ASCII name inside the
# script, a path, a flag) it states a standing rule.
_ALWAYS_NEVER_SCRIPT = rx(
    r"必ず|絶対|常に|今後|決して|절대|항상|반드시|앞으로|一直|总是|始终|永远|绝不|以后|必须"
    r"|\b(?:всегда|никогда|впредь|luôn|không bao giờ|hamesha|kabhi (?:nahi|mat))\b"
    r"|\bnon\b[^.;]{0,30}\bmai\b|\bni(?:emals)?\b[^.;]{0,5}\b(?:mehr)\b|\bничего не\b"
)
# A named thing: backticks, a path or dotted/hyphenated/underscored name, a flag, a name
# with digits, or a camelCase name ("ktlintCheck", "raw.*", "release/*", "fp16").
_NAMED = re.compile(
    r"`[^`]+`|(?<![\w-])--?[a-z][\w-]+|\b[\w]+[-_./*][\w*]|(?<![a-z])[a-z]++[A-Z]\w*"
    r"|\b[A-Za-z]+\d\w*"
)
# Outside Latin scripts an ASCII word is a name ("main", "pnpm", "iOS").
_ASCII_WORD = re.compile(r"[A-Za-z]{2,}")
_NON_LATIN = re.compile(r"[\u0400-\u04ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def _always_named(sentence: str) -> bool:
    """ "immer/nigdy/必ず/절대/всегда …" with the thing the rule is about."""
    if not (_ALWAYS_NEVER_SCRIPT.search(sentence) or _ALWAYS_LATIN.search(sentence)):
        return False
    if _NAMED.search(sentence):
        return True
    return bool(_NON_LATIN.search(sentence) and _ASCII_WORD.search(sentence))


# Not English (its "always"/"never" also describe: "we never had e2e", "I always mix them
# up"; the shapes above read it), nor the bare "nie" (Polish "not") and "mai" (Romanian
# "more"): alone they say nothing
_ALWAYS_LATIN = rx(
    r"\b(?:"
    + "|".join(w for w in ALWAYS_NEVER_WORDS.split("|") if w not in ("nie", "mai"))
    + r")\b"
)
# "Zawsze, przy każdym pushu": the sentence before it is the rule, this one makes it standing
MAKES_STANDING_ANY = rx(
    r"^\W*(?:always|zawsze|immer|toujours|siempre|sempre|altijd|alltid|vždy|всегда|항상|必ず"
    r"|一直)\W*(?:[,:]|$)"
)

# "post it in #fin-ops like always": a habit, but only with the value it is about
_AS_ALWAYS = rx(r"\b(like|as) always\b|\bas usual\b")
_VALUE = re.compile(r"#[\w-]+|\b\w+[-_./]\w[\w./-]*")
_DETERMINER = rx(r"\b(the|all|our|every|any)\s+$")
_STRONG = (_GATE, _PIN, _WITHOUT_ASKING, EVERY_RUN, DONT_TOUCH, _NONE_BUT)
# These also read as a request about the work in hand ("add that ssh goes through the
# bastion"), so only a statement counts.
_STATEMENT_ONLY = (_WE_USE, _PATH, _MUST_PLACE)


def states_shaped_rule(sentence: str, work_order: bool) -> bool:
    """The sentence states a standing rule in one of the shapes above."""
    if _BY_HAND.search(sentence) and _NEGATION.search(sentence):
        return True
    if _AS_ALWAYS.search(sentence) and _VALUE.search(sentence):
        return True
    if any(p.search(sentence) for p in _STRONG):
        return True
    if not work_order and _always_named(sentence):
        return True
    how = _HOW_HERE.search(sentence)
    if how and (
        _DETERMINER.search(sentence[: how.start()])
        or not is_work_order(re.split(r",\s+", sentence[how.start() :])[0])
    ):
        # "benchmarks use criterion, compare against main" states how benchmarks run even
        # beside a request; "Deploys go through X", which reads as an order to deploy, only
        # with a determiner that makes "deploys" a noun ("all deploys go through X")
        return True
    return not work_order and any(p.search(sentence) for p in _STATEMENT_ONLY)


# A turn that says an older value is wrong or gone: "the README is wrong", "X was the old
# layout", "prod-eu-1 war der alte", "eu-west-1 är bara gamla staging", "stock は昔の名前".
# Its statements that carry a value are corrections.
OLD_VALUE = rx(
    r"\b(the old|is the old|was the old|old name|der alte|die alte|das alte|gamla|l'ancien"
    r"|el viejo|il vecchio|stary|starý|eski|torn down|is dead|gibts nicht mehr|doesn'?t exist"
    r"|out of date|outdated|pas à jour|veraltet|desactualizad\w*|is wrong|are wrong|thats wrong"
    r"|that'?s wrong|don'?t trust (those|that|it))\b|昔|旧"
)
# "we must change the relay to the new one": a change to make, not a fact that holds
# "the smsgate key must be rotated": a one-off task said with a modal
TO_DO = rx(
    r"\b(must|need to|needs to|have to|has to|want to|should) (change|switch|move|update)\b"
    r"|\b(must|needs? to|has to|have to) be (rotated|renewed|replaced|fixed|updated|upgraded"
    r"|removed|migrated|changed)\b"
)
# The old value itself, or a document that still names it: never the rule
STILL_SAYS = rx(r"\b(still )?(says?|documents?)\b")
DOCS_WRONG = rx(r"\b(readme|docs?)\b[^.;]{0,20}\b(wrong|out of date|outdated|stale)\b")
NOT_WORDS = r"not|pas|nicht|no|non|inte|nie|ne|niet|ikke"
# "X, not Y" in the languages people write to us in, and "X değil, Y" (Turkish puts the
# negation after the old value): a value corrected in place
# Each value run starts where a run of its characters starts ("(?<!…)"): a match that
# starts inside a run also matches from the run's start, so the leftmost match is the
# same, but a long "word" is no longer re-scanned from each of its characters (quadratic:
# 0.6 s per call on one 4,000-character word).
VALUE_NOT = rx(
    rf"(?<![\w./:@`-])[\w./:@`-]+,?\s+({NOT_WORDS})\s+`?[\w./:@-]+"
    r"|(?<!\S)\S+ değil,\s*\S+"
    # "minSdkは24じゃなくて26", "前缀是 /api/v2，不是 /api", "24가 아니라 26", "не staging, а
    # prod-eu", "'Terrain' hai ab, 'Ground' nahi": a value, the script's "not", another value
    r"|(?<![\w./:@'-])[\w./:@'-]+\s*(?:じゃなくて|ではなく|でなく|가 아니라|이 아니라)\s*[\w./:@'-]+"
    r"|(?<![\w./:@'-])[\w./:@'-]+\s*[，,]\s*不是\s*[\w./:@'-]+|不是\s*[\w./:@'-]+\s*[，,]?\s*(?:而)?是\s*[\w./:@'-]+"
    r"|\bне\s+[\w./:@'-]+\s*,\s*а\s+[\w./:@'-]+"
    r"|'[\w./-]+'[^.;]{0,20},\s*'[\w./-]+' nahi\b"
)

# --- corrected values ------------------------------------------------------------
# A value a rule is about: a command, a flag, a port, a dotted, dashed or slashed name
KEY = rx(r"`[^`]+`|(?<![\w-])--?[a-z][\w-]*|\b\d{4,5}\b|\b[\w]+[-_./][\w./-]+\b")

# One sentence often carries two facts ("we deploy with X, and you must run Y first"); each
# is kept or superseded on its own.
FACT_SPLIT = re.compile(r",\s+and\s+|,\s+but\s+|;\s+|\.\s+|\?\s+")

# Structural, any language: two values of one kind side by side in a statement ("die Test-DB
# läuft auf 5434, nicht 5433", "@mkoval now not @dpr", "gpu-07 was retired, now is gpu-11")
# correct one to the other. The value that holds is the first, unless a "now" word leads the
# second; the other value's clause is left out.
_VALUE_KINDS = (
    re.compile(r"(?<![\w.:/-])(?!19\d\d\b|20\d\d\b)\d{4,5}(?![\w-]|\.\w)"),  # ports, not years
    re.compile(r"(?<![\w/])/[\w.-]+(?:/[\w.-]+)*"),  # paths
    re.compile(r"(?<![\w@])@[\w-]+"),  # handles
    rx(r"\b[a-z]+-\d+\b"),  # numbered hosts ("gpu-11")
)
_NOW_WORD = rx(r"\b(now|jetzt|ahora|maintenant|agora|ora|nu)\b")
_NEGATED = rx(r"\b(not|nicht|no|pas|não|nao|non|kein|statt)\W+(\w+\W+)?$")
_PAIR_SPAN = 40
# What sets the value that holds against the other: a negation, "instead", "the old", "was".
_SETS_APART = rx(
    r"\b(not|nicht|no|pas|não|nao|non|kein|statt|instead|rather|old|alte|ancien|viejo|was|war"
    r"|correct|richtig|correcto|correto)\b|\bn'?t\b"
)


def corrects_value(sentence: str, turn_text: str) -> str | None:
    """A statement with a value in a turn that names the old one ("staging is ledger-stg-2,
    the old ledger-stg was torn down"), or "X, not Y" in any language. The clause naming the
    old value is left out; a sentence that only names it ("3300 war der alte Port") is none."""
    if is_work_order(sentence) or STILL_SAYS.search(sentence) or TO_DO.search(sentence):
        return None
    m = VALUE_NOT.search(sentence)
    if m and re.search(r"\d|\w[./_-]\w", m.group(0)):
        return sentence
    parts = [p for s in sentences(turn_text) for p in FACT_SPLIT.split(s)]
    old = [p for p in parts if OLD_VALUE.search(p)]
    if not KEY.search(sentence) or not any(KEY.search(s) or DOCS_WRONG.search(s) for s in old):
        return None
    at = OLD_VALUE.search(sentence)
    if at is None:
        return sentence
    head = sentence[: max(max(sentence.rfind(c, 0, at.start()) for c in (", ", "。", "、")), 0)]
    return head if KEY.search(head) else None


def value_correction(sentence: str) -> str | None:
    for p in _VALUE_KINDS:
        hits = list(p.finditer(sentence))
        if len(hits) != 2 or hits[0].group(0) == hits[1].group(0):
            continue
        first, second = hits
        between = sentence[first.end() : second.start()]
        if len(between) > _PAIR_SPAN:
            continue
        if _NOW_WORD.search(between) and not _NEGATED.search(
            between
        ):  # "gpu-07 was retired, now is gpu-11"
            cut = max(between.rfind(", "), between.rfind("; "))
            return sentence[first.end() + cut + 2 :] if cut >= 0 else sentence[second.start() :]
        if not (_SETS_APART.search(between) or _SETS_APART.search(sentence[second.end() :][:12])):
            # "1) remove /v1/search 2) cache /v2/search": two values, no correction ("OPS-44,
            # OPS-41 was the label printer" says which is the old one after it)
            continue
        cut = between.find(",")
        return sentence[: first.end() + cut] if cut >= 0 else sentence[: first.end()]
    return None


# --- the extractor ------------------------------------------------------------

MAX_CONSTRAINTS = 5  # "at most a handful": a long list stops being read

_FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*|(?<![\w-])-[a-zA-Z]\s+[\w./-]+")
_REQUIRE = rx(
    r"\b(always|must|have to|has to|need to|needs to|required|requires|make sure|remember to"
    r"|don'?t forget|or (else )?(it|they)\b|otherwise|only works with)\b"
)
_NAME_FIX = rx(
    r"\b(it'?s|is called|named|is)\s+`?[\w./:@-]+`?,?\s+not\s+`?[\w./:@-]+"
    r"|\b(got|was|been|is) renamed\b|\bis `[^`]+` now\b|\b(was|got|been) (removed|replaced)\b"
    r"|\b(is|are) (now )?(called|named) [\w./:@`-]+( now)?\b|\bnow (called|named)\b"
    r"|\b(we|i|they|it got|was) renamed (\S+ ){0,2}to\b"
    r"|\b(isn'?t|is not|aren'?t|are not) (called|named) \S+,? (it'?s|they'?re)\b"
)
# "we always run tests with `make test`, never bare pytest": a standing rule about a command.
# The words for "always" and "never" in the languages people write to us in (a thin layer:
# the command or flag beside them is what makes the sentence a rule).
_ALWAYS_WORDS = (
    r"always|never|only ever|must always|must never|immer|niemals|nie|toujours|jamais"
    r"|siempre|nunca|sempre|mai"
)
_ALWAYS_NEVER = rx(
    rf"\b({_ALWAYS_WORDS})\b[^.;]{{0,60}}(`[^`]+`|(?<![\w-])--?[a-z][\w-]+)"
    # "se fait avec `./deploy.sh staging`, jamais avec kubectl": the command, then the word
    rf"|(`[^`]+`|(?<![\w-])--[a-z][\w-]+)[^.;]{{0,12}}\b({_ALWAYS_WORDS})\b"
)
# "staging deploys only work from the VPN": a condition the environment imposes.
_CONDITION = rx(
    r"\bonly works? (from|with|on|over|inside|behind|if|when)\b"
    r"|\b(won'?t|doesn'?t|does not|will not) work (unless|without|outside|off)\b"
    r"|\b(you have to|you need to|you must) be (on|connected|logged|inside|behind)\b"
    # "anything on *.internal is only reachable over the VPN"
    r"|\bonly (reachable|accessible|available|visible|resolvable|routable) (from|over|via"
    r"|through|inside|behind|on|with|in)\b"
)
# "We deploy with `fab deploy:prod`", "you must run `fab db.migrate` first"
_COMMAND = re.compile(r"`[^`]+`|(?<![\w-])--?[a-z][\w-]*|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_HOW_WE_RUN = rx(
    r"\bwe (deploy|build|release|test|run|start|migrate|ship|publish)\w* (it )?(with|using|via"
    r"|through)\b"
)
# A standing rule said as one: "remember prod only changes through argocd", "from now on
# ...", "make sure to ...", "we use pnpm, not npm". Only with an operational subject (an
# environment, a tool, a process), so a wish about one piece of work does not qualify.
_STANDING_LEAD = rx(
    r"(?<!you )(?<!do )\bremember(?! when\b| how\b| what\b| why\b| if\b)\b|\bfrom now on\b"
    r"|\bgoing forward\b|\bin (the )?future\b|\bmake sure (to|you|that|the|we)\b"
    r"|\b(always|never|must|must not|mustn'?t|has to|have to|needs to|need to)\b"
)
_OPS = rx(
    r"\b(prod|production|staging|stage|ci|main|master|branch|deploy\w*|releas\w*|migrations?"
    r"|database|db|cluster|vpn|server|runners?|env|docker\w*|k8s|kubernetes|helm|argo\s?cd|argocd"
    r"|terraform|pipeline|repo|bucket|region|account|alias|registry|image|node|python|pnpm|npm"
    r"|yarn|uv|poetry|pip|make|gradle|ssh|host|port|secrets?|keys?|tokens?|lockfile|schema"
    r"|sandbox|prod\w*)\b"
)
# "prod only changes through argocd", "only deploy via the pipeline", "don't helm upgrade
# prod directly": the one sanctioned path.
_ONLY_PATH = rx(
    r"\b(only|always) (\w+ ){0,2}(through|via|from|with|using|by|to)\b|\b(don'?t|never"
    r"|do not) [^.;]{0,40}\bdirectly\b"
    r"|\bwe use \S+,? not\b|\buse \S+,? (not|never) \S+"
)
# "batch jobs run only between 01:00 and 05:00", "maintenance window is sat 23:00-02:00",
# "deploys are frozen on fridays", "only run on saturday": when something may happen.
_WINDOW = rx(
    r"\bonly (\w+ ){0,2}(between|after|before|during|on|at) [^.;]{0,30}"
    r"(\d{1,2}:\d{2}|\b(mon|tue|wed|thu|fri|sat|sun)\w*|weekends?|nights?)\b"
    r"|\bwindow (is|runs|opens|moved)\b[^.;]{0,20}\d{1,2}:\d{2}"
    r"|\b(frozen|freeze|no deploys?) (on|during) \w+"
)
# "the admin interface must stay in english": a property the work must leave as it is
_MUST_STAY = rx(r"\b(must|has to|have to|should|needs? to) (always )?(stay|remain)\b")
# "keep runs-on as it is": a standing instruction about a named setting
_KEEP_AS = rx(r"\bkeep [\w./:@-]+ (as (it )?is|unchanged|that way|pinned)\b")
_PASTE = re.compile(r"```.*?(```|$)", re.S)
# "always", "from now on": said of every run, not of the work in hand
_EVERY_TIME = rx(
    r"\b(always|never|from now on|going forward|in (the )?future|whenever|every time|each time)\b"
)
# A rule for now is not a standing fact.
_TEMPORARY = rx(r"\b(for now|for today|this time|just this once|until (the|we|i|she|he))\b")
_OWNERSHIP = rx(
    r"\b(?!who\b)\w+ owns? the\b|\bowned by\b|\bdon'?t touch (the|our) \w+"
    r"|\bnever (push|commit|deploy|touch|edit)\b"
    # "he owns prod airflow deploys", "finance (Marta) runs anything that touches balances"
    r"|\b(he|she|they|(?!who\b)\w+\)?) owns\b|\b(he|she|they) own (that|this|the|those)\b"
    r"|\b(runs|handles|does|approves|signs off on|reviews) (anything|everything|all|any)\b"
    r"[^.;]{0,12}\b(that|which|touching|in|on|to do with)\b"
)
_MISTYPED = rx(r"\b(mistyped|misspelled|typo in the name)\b")
# "always do that for these numbers": the rule is the sentence before, made standing
_MAKES_STANDING = rx(
    r"^\W*(and |so )?(always|from now on|going forward|every time|each time)\b[^.;]{0,20}?"
    r"\b(do|apply|keep|use) (that|this|it)\b"
    r"|^\W*(and |so )?(do|apply|keep|use) (that|this|it) (always|from now on|going forward"
    r"|every time|each time)\b"
)
_PRONOUN_LEAD = rx(r"^\W*(he|she|they|it)\b")
# "don't touch .gitlab-ci.yml, infra owns it": the object is in the clause before
_OWNS_PRONOUN = rx(r"^\W*\w+ owns? (it|that|this|them)\b")

_PORT_FACT = rx(
    r"\b(should|must|always|moved|now|lives?|listens?)\b[^.;]{0,40}\b(on|to|at) (port )?\d{4,5}\b"
)
_LEAD = rx(
    r"^\W*((you forgot|reminder|note|fyi|also|and|oh|ok|okay|so|btw|actually|wait|reviewer says)\b"
    r"[\s:,.-]*)+"
)


def _clause(sentence: str, at: int) -> str:
    """The clause holding position ``at``; with a pronoun for a subject ("he owns prod
    deploys"), the clause before it too, which names who that is."""
    start = max(sentence.rfind(sep, 0, at) for sep in (", ", "; ", ": "))
    if start < 0:
        return sentence
    clause = sentence[start + 2 :]
    if _PRONOUN_LEAD.match(clause) or _OWNS_PRONOUN.match(clause):
        before = max(sentence.rfind(sep, 0, start) for sep in (", ", "; ", ": "))
        return sentence[before + 2 :] if before >= 0 else sentence
    return clause


_ASKS = rx(
    r"^\W*(?:why|does|do|did|is|are|was|were|can|could|should|would|what|how|which|where"
    r"|when|who|any idea|is there)\b"
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
    if FACT_LEAD.search(turn_text) and KEY.search(sentence):
        return sentence  # "fyi the client points at /api/v2": flagged for later by the person
    command = _COMMAND.search(sentence)
    if (
        ((_FLAG.search(sentence) or command) and _REQUIRE.search(sentence))
        or (command and _HOW_WE_RUN.search(sentence))
        or any(p.search(sentence) for p in (_NAME_FIX, _ALWAYS_NEVER, _CONDITION))
    ):
        return sentence
    if _TEMPORARY.search(sentence) and not EVERY_RUN.search(sentence):
        return None  # "before every commit, you did it this time" is still every time
    if _KEEP_AS.search(sentence) and KEY.search(sentence):
        return sentence
    pair = value_correction(sentence)
    if pair is not None and not is_work_order(sentence.split(",")[0]):
        return pair  # a statement, not an order ("port 6432, not 6543" is no "port X" order)
    m = _OWNERSHIP.search(sentence)
    if m:
        # "ask Minh before changing the schema, he owns that table": who owns what is a
        # standing fact even inside a request
        return _clause(sentence, m.start())
    if (
        _WINDOW.search(sentence)
        or _MUST_STAY.search(sentence)
        or (_ONLY_PATH.search(sentence) and KEY.search(sentence))  # "always via jump.internal"
        or states_shaped_rule(sentence, is_work_order(sentence))
    ):
        return sentence
    fixed = corrects_value(sentence, turn_text)
    if fixed:
        return fixed
    # "upgrade X and make sure the migrations apply", "the smsgate key must be rotated": about
    # this work only, a task, not a standing rule
    if (is_work_order(sentence) or TO_DO.search(sentence)) and not _EVERY_TIME.search(sentence):
        return None
    ops = _OPS.search(sentence) and (_ONLY_PATH.search(sentence) or _STANDING_LEAD.search(sentence))
    # "the bucket is acme-export, singular. I mistyped it before."
    typo = _MISTYPED.search(turn_text) and not _MISTYPED.search(sentence) and KEY.search(sentence)
    return sentence if ops or _PORT_FACT.search(sentence) or typo else None


_RENAMED = rx(r"\b(renamed|is stale)\b")
_MOVED = rx(r"\b(renamed|moved|is now|are now|it'?s now|changed to|now)\b")
_PORT = re.compile(r"\b\d{4,5}\b")


def _kinds(text: str) -> set[str]:
    pairs = (("<flag>", _FLAG), ("<port>", _PORT), ("<window>", _WINDOW))
    return {k for k, p in pairs if p.search(text)}


def _keys(text: str) -> set[str]:
    """What a fact is about: its values, and its kind when it restates a fact without naming
    the old value ("the flag got renamed, it's --no-assets now", "the window moved to
    Saturday 23:00"): it supersedes the earlier fact of that kind."""
    moved = _MOVED.search(text)
    kinds = {k for k in _kinds(text) if moved or k == "<window>"}
    return {k.lower().strip(".") for k in KEY.findall(text)} | kinds


# "the port is 5439, not 5432": a correction states the value that holds; the superseded one
# is left out, so a reader (or a later model) never picks up the wrong value from it.
_NOT_OLD = rx(
    rf"(?:(?<!\s)\s+)?(?:,|\u2014|\u2013|\s-)\s*(?:{NOT_WORDS})\s+`?[\w./:@-]+`?(?=\s*(?:[.;,)\u2014\u2013]|$))"
)

# "... a new instance, not point-in-time recovery, because PITR has bitten us" and "`v3` not
# warehouse.old": the rejected alternative (up to four words) and the story behind it go too;
# "..., nobody runs plan from a laptop" restates the rule by the practice it forbids.
_NOT_PHRASE = rx(
    r"(?:(?:(?<!\s)\s+)?,\s*|(?<=`)\s+)(?:not|pas|nicht|inte|niet|ikke)\s+[\w./:@`-]+(?:\s+[\w./:@`-]+){0,3}"
    r"(?:\s*,\s*because\b.{0,400})?\s*(?=[.;]|$)"  # (".*" re-read the line per ", because")
)
_NOBODY = rx(r"(?:(?<!\s)\s+)?,\s*(?:nobody|no one|noone)\b[^.;]*(?=[.;]|$)")


def _shape(text: str) -> str:
    text = _NOT_OLD.sub("", _LEAD.sub("", text))
    text = _NOBODY.sub("", _NOT_PHRASE.sub("", text)).strip().rstrip(".")
    return clip(text[:1].upper() + text[1:], 160)


def _is_standing(sentence: str) -> bool:
    """Said of every run, not of the work in hand: a corrected value ("port 5439, not 5432")
    is about the work and goes with it."""
    return any(
        p.search(sentence) for p in (_EVERY_TIME, _ALWAYS_NEVER, _OWNERSHIP, _WINDOW, _CONDITION)
    )


def states_rule_only(text: str) -> bool:
    """The turn states a standing rule and asks nothing else ("Parfait, merci. Au fait, le
    script doit toujours tourner avec --target test-pg"): every sentence is a rule or a few
    words of thanks, whatever the language."""
    if "?" in text:
        return False
    parts = [p for s in sentences(_PASTE.sub(" ", text)) for p in FACT_SPLIT.split(s) if p.strip()]
    rules = [p for p in parts if _rule(p, text) is not None and _is_standing(p)]
    rest = [p for p in parts if p not in rules]
    return bool(rules) and all(len(content_words(p)) <= 2 for p in rest)


# A value with a unit: "--lock-timeout=5s" then "actually 3s".
_DURATION = rx(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|m|min|h)\b")

_PERSON_LEAD = rx(r"^\W*(he|she|they)\b")
# "One note for the future, since this bit me before: migrations are ...": a preamble of
# words and no value before a colon; the rule is what follows it.
_PREAMBLE = re.compile(r"^[^:`/\n]{8,80}?:\s+(?=\S)")


def _after_preamble(rule: str) -> str:
    m = _PREAMBLE.match(rule)
    if m is None or KEY.search(m.group(0)) or len(content_words(rule[m.end() :])) < 2:
        return rule
    return rule[m.end() :]


def _restated(text: str, last: str | None) -> str | None:
    """ "actually 3s" right after "always w/ --lock-timeout=5s": a short turn with one value
    of the kind the rule just stated holds one, and no rule of its own, corrects that value."""
    if last is None or len(text.split()) > 12 or "?" in text:
        return None
    for p in (_DURATION, _PORT):
        said, held = p.findall(text), p.findall(last)
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
        parts = [p for s in sentences(said) for p in FACT_SPLIT.split(s) if p.strip()]
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
            if rule == sentence and _RENAMED.search(rule) and not KEY.search(rule):
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
