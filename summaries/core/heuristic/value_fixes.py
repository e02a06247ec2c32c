"""Corrected values: "port 6432, not 6543", "staging is ledger-stg-2, the old ledger-stg was
torn down", "Prod ligger i eu-north-1, inte eu-west-1". Split from ``constraints`` (which
decides what is a rule); this decides which value of a corrected pair holds."""

from __future__ import annotations

import re

from summaries.core.heuristic.rule_shapes import (
    DOCS_WRONG,
    OLD_VALUE,
    STILL_SAYS,
    TO_DO,
    VALUE_NOT,
)
from summaries.core.heuristic.signals import is_work_order
from summaries.core.heuristic.words import sentences

_I = re.IGNORECASE
# A value a rule is about: a command, a flag, a port, a dotted, dashed or slashed name
KEY = re.compile(r"`[^`]+`|(?<![\w-])--?[a-z][\w-]*|\b\d{4,5}\b|\b[\w]+[-_./][\w./-]+\b", _I)

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
    re.compile(r"\b[a-z]+-\d+\b", _I),  # numbered hosts ("gpu-11")
)
_NOW_WORD = re.compile(r"\b(now|jetzt|ahora|maintenant|agora|ora|nu)\b", _I)
_NEGATED = re.compile(r"\b(not|nicht|no|pas|não|nao|non|kein|statt)\W+(\w+\W+)?$", _I)
_PAIR_SPAN = 40
# What sets the value that holds against the other: a negation, "instead", "the old", "was".
_SETS_APART = re.compile(
    r"\b(not|nicht|no|pas|não|nao|non|kein|statt|instead|rather|old|alte|ancien|viejo|was|war"
    r"|correct|richtig|correcto|correto)\b|\bn'?t\b",
    _I,
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
    for rx in _VALUE_KINDS:
        hits = list(rx.finditer(sentence))
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
