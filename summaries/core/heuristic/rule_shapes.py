"""Standing-rule shapes the core extractor in ``constraints`` does not know.

Each shape is structural (a modal or "only" word with a scope, a sanctioned path, a gate
before an irreversible step, a version pin, a correction that names the old value) and
carries a thin lexicon for the languages people write to us in. The words alone never
make a rule: every shape also needs its scope (a path word, a value, a "by hand" object).
"""

from __future__ import annotations

import re

from summaries.core.heuristic.signals import is_work_order

_I = re.IGNORECASE

# "always" / "never" across languages: with an operational word they make a standing rule
ALWAYS_NEVER_WORDS = (
    r"toujours|jamais|siempre|nunca|sempre|mai|immer|niemals|nie|altijd|nooit|alltid|aldrig"
    r"|zawsze|nigdy|vždy|nikdy|asla|daima|her zaman"
)
# "we use pnpm here", "usamos pnpm, no npm", "we use poetry btw not pip"
_WE_USE = re.compile(
    r"\b(we|i) (use|are using|work with)\b[^.;]{0,30}?(\b(here|in this repo|not|instead of)\b"
    r"|,\s*(no|not|pas|nicht|nie|ne|inte)\b)"
    r"|\b(usamos|utilisons|on utilise|nutzen wir|wir nutzen|verwenden wir|używamy|používáme"
    r"|kullan\u0131yoruz|gebruiken we|vi använder)\b[^.;]{0,30}?(,\s*(no|not|pas|nicht|nie|ne|inte)"
    r"|\b(aquí|ici|hier|tutaj|zde|här|burada|qui))\b",
    _I,
)
# "tutto passa da Atlantis", "ça passe toujours par le pipeline", "goes through Ilse",
# "her şey ArgoCD üzerinden gidiyor", "everything goes in the ansible roles", "gitops only"
_PATH = re.compile(
    r"\b(goes|go|passes|pass|runs?|happens?) (only )?(through|via)\b|\bpassa da\b"
    r"|\bpass(e|ent) (toujours |uniquement )?par\b|\büzerinden\b|\bläuft (immer )?über\b"
    r"|\beverything (goes|go|lives|belongs) (in|into|through|via|to)\b"
    # (a leading "-" run belongs to the name, never to both: "\W*" alone re-split it)
    r"|^(?:\W*[^\w-])?[\w-]+ only\s*(,|$)",
    _I,
)
# "never ... by hand", "non fare mai ... in locale", "手でALTERしないで", "elle ... yapma"
_BY_HAND = re.compile(
    r"\b(by hand|manually|à la main|a mano|in locale|von hand|händisch|ręcznie|ručně|elle"
    r"|för hand|from a laptop|vanaf een laptop)\b|手で",
    _I,
)
_NEGATION = re.compile(
    rf"\b(never|don'?t|dont|do not|no|not|{ALWAYS_NEVER_WORDS}|nicht|kein|ne|non|yapma|inte"
    r"|nie|ani)\b|しないで|ないで",
    _I,
)
# "no apply before I see the plan", "Kein apply bevor ich den Plan gesehen habe",
# "visa mig innan du gör apply", "show me before apply": a gate before an irreversible step
_GATE = re.compile(
    r"\b(before|bevor|avant que|antes de que|prima che|innan|zanim|než|until)\b[^.;]{0,30}"
    r"\b(i|ich|je|yo|io|jag|ja|me|mig|mir|moi)\b[^.;]{0,20}\b(see|seen|gesehen|vu|visto|sett"
    r"|zobaczę|approve|ok|okay|review)\w*"
    r"|\b(show me|zeig mir|visa mig|montre-moi|muéstrame|mostrami|pokaż mi)\b[^.;]{0,40}"
    r"\b(before|bevor|innan|avant|antes|prima|zanim)\b",
    _I,
)
# "MSRV is 1.74", "MSRV zostaje 1.74", "our minimum is iOS 15", "minSdk is actually 26",
# "we stay on java 21": a version the work may not go past
_PIN = re.compile(
    r"\b(msrv|minsdk|min sdk|min(imum)? (version|sdk)|our minimum|rust-version|target sdk)\b"
    r"[^.;]{0,25}\d+(\.\d+)*"
    r"|\bwe (stay|are staying|remain) on [a-z]+ \d+(\.\d+)*\b",
    _I,
)
# "without asking me first", "bez uzgodnienia", "ohne Rücksprache": a permission rule
_WITHOUT_ASKING = re.compile(
    r"\bwithout (asking|checking with|telling|my ok|approval|review)\b|\bbez uzgodnienia\b"
    r"|\bohne rücksprache\b|\bsans (demander|validation)\b|\bsin (preguntar|consultar)\b",
    _I,
)
# "make lint before every commit", "like always", ", ever", "no exceptions"
EVERY_RUN = re.compile(
    r"\b(before|after) (every|each|any) \w+|,\s*ever\b"
    r"|\bno exceptions\b",
    _I,
)
# "migrations are expand/contract here", "benchmarks use criterion", "all index changes go
# through Ilse", "every architectural decision gets an ADR": how a kind of thing is done here
_HOW_HERE = re.compile(
    r"\b(tests|benchmarks|migrations|deploys|deployments|releases|builds|commits|commit messages?"
    r"|prs|secrets|schema changes|index changes)\b (here )?(always )?(uses?|go|goes|runs?|needs?|must"
    r"|lives?|gets?|are [^.;]{0,30}\bhere)\b"
    r"|\bevery [\w ]{0,25}? (gets|goes|needs|must|has to)\b"
    # "all clinics are in Europe/Vienna"
    r"|\ball \w+ (are|is|run|live) (in|on|at) \w+[/.-]\w",
    _I,
)
# "must come from the i18n file", "måste ha taggen cost-center", "needs to sit behind the
# FeatureFlags system": where a thing must come from or live
_MUST_PLACE = re.compile(
    r"\b(must|needs? to|has to|have to|måste|muss|doit|debe|deve|musi|musí)\b (\w+ ){0,1}"
    r"(come from|come out of|go (through|in|into|via)|live in|sit behind|be behind|ha|haben"
    r"|have the|have a tag|use)\b",
    _I,
)
# "don't touch build numbers, fastlane does that", "src/legacy no se toca"
DONT_TOUCH = re.compile(
    r"\b(don'?t|dont|do not|never) touch (?!anything|it\b|that\b|this\b|yet\b)[\w.`/]|\bno se toca\b|\bnicht anfassen\b|\bne touche pas\b"
    r"|\bnon toccare\b|\bnie ruszaj\b|\bnesahej\b|\bniet aanraken\b|\bpas y toucher\b"
    r"|\bne (?:pas|jamais) (?:y )?toucher\b|\bhaath mat lagana\b|\bmat chhedna\b|건드리지 마"
    r"|触らないで|不要(?:碰|动|改)",
    _I,
)
# "no X in library code, only in tests", "žádné unwrap v knihovním kódu, jen v testech"
_NONE_BUT = re.compile(
    r"\b(no|žádné|žádný|keine?|aucun|ningún|nessun|żadnych|inga|hiç)\b [^.;,]{1,40},\s*"
    r"(only|jen|nur|seulement|solo|tylko|bara|sadece)\b",
    _I,
)


# "always" / "never" / "from now on" in the scripts that have no word boundaries or are
# often written without the Latin words above: Japanese, Korean, Chinese, Russian,
# Vietnamese and romanized Hindi. With a named thing beside it (an ASCII name inside the
# script, a path, a flag) it states a standing rule.
_ALWAYS_NEVER_SCRIPT = re.compile(
    r"必ず|絶対|常に|今後|決して|절대|항상|반드시|앞으로|一直|总是|始终|永远|绝不|以后|必须"
    r"|\b(?:всегда|никогда|впредь|luôn|không bao giờ|hamesha|kabhi (?:nahi|mat))\b"
    r"|\bnon\b[^.;]{0,30}\bmai\b|\bni(?:emals)?\b[^.;]{0,5}\b(?:mehr)\b|\bничего не\b",
    _I,
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
_ALWAYS_LATIN = re.compile(
    r"\b(?:"
    + "|".join(w for w in ALWAYS_NEVER_WORDS.split("|") if w not in ("nie", "mai"))
    + r")\b",
    _I,
)
# "Zawsze, przy każdym pushu": the sentence before it is the rule, this one makes it standing
MAKES_STANDING_ANY = re.compile(
    r"^\W*(?:always|zawsze|immer|toujours|siempre|sempre|altijd|alltid|vždy|всегда|항상|必ず"
    r"|一直)\W*(?:[,:]|$)",
    _I,
)


# "post it in #fin-ops like always": a habit, but only with the value it is about
_AS_ALWAYS = re.compile(r"\b(like|as) always\b|\bas usual\b", _I)
_VALUE = re.compile(r"#[\w-]+|\b\w+[-_./]\w[\w./-]*")
_DETERMINER = re.compile(r"\b(the|all|our|every|any)\s+$", _I)
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
    if any(rx.search(sentence) for rx in _STRONG):
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
    return not work_order and any(rx.search(sentence) for rx in _STATEMENT_ONLY)


# A turn that says an older value is wrong or gone: "the README is wrong", "X was the old
# layout", "prod-eu-1 war der alte", "eu-west-1 är bara gamla staging", "stock は昔の名前".
# Its statements that carry a value are corrections.
OLD_VALUE = re.compile(
    r"\b(the old|is the old|was the old|old name|der alte|die alte|das alte|gamla|l'ancien"
    r"|el viejo|il vecchio|stary|starý|eski|torn down|is dead|gibts nicht mehr|doesn'?t exist"
    r"|out of date|outdated|pas à jour|veraltet|desactualizad\w*|is wrong|are wrong|thats wrong"
    r"|that'?s wrong|don'?t trust (those|that|it))\b|昔|旧",
    _I,
)
# "we must change the relay to the new one": a change to make, not a fact that holds
# "the smsgate key must be rotated": a one-off task said with a modal
TO_DO = re.compile(
    r"\b(must|need to|needs to|have to|has to|want to|should) (change|switch|move|update)\b"
    r"|\b(must|needs? to|has to|have to) be (rotated|renewed|replaced|fixed|updated|upgraded"
    r"|removed|migrated|changed)\b",
    _I,
)
# The old value itself, or a document that still names it: never the rule
STILL_SAYS = re.compile(r"\b(still )?(says?|documents?)\b", _I)
DOCS_WRONG = re.compile(r"\b(readme|docs?)\b[^.;]{0,20}\b(wrong|out of date|outdated|stale)\b", _I)
NOT_WORDS = r"not|pas|nicht|no|non|inte|nie|ne|niet|ikke"
# "X, not Y" in the languages people write to us in, and "X değil, Y" (Turkish puts the
# negation after the old value): a value corrected in place
# Each value run starts where a run of its characters starts ("(?<!…)"): a match that
# starts inside a run also matches from the run's start, so the leftmost match is the
# same, but a long "word" is no longer re-scanned from each of its characters (quadratic:
# 0.6 s per call on one 4,000-character word).
VALUE_NOT = re.compile(
    rf"(?<![\w./:@`-])[\w./:@`-]+,?\s+({NOT_WORDS})\s+`?[\w./:@-]+"
    r"|(?<!\S)\S+ değil,\s*\S+"
    # "minSdkは24じゃなくて26", "前缀是 /api/v2，不是 /api", "24가 아니라 26", "не staging, а
    # prod-eu", "'Terrain' hai ab, 'Ground' nahi": a value, the script's "not", another value
    r"|(?<![\w./:@'-])[\w./:@'-]+\s*(?:じゃなくて|ではなく|でなく|가 아니라|이 아니라)\s*[\w./:@'-]+"
    r"|(?<![\w./:@'-])[\w./:@'-]+\s*[，,]\s*不是\s*[\w./:@'-]+|不是\s*[\w./:@'-]+\s*[，,]?\s*(?:而)?是\s*[\w./:@'-]+"
    r"|\bне\s+[\w./:@'-]+\s*,\s*а\s+[\w./:@'-]+"
    r"|'[\w./-]+'[^.;]{0,20},\s*'[\w./-]+' nahi\b",
    _I,
)
