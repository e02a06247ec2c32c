"""Word-level helpers: tokens, a light stemmer, sentences, clipping.

The heuristic compares turns by the distinctive words they share, so tokens are
stemmed just enough that "reports"/"report" or "logging"/"log" meet, and
identifiers are split ("StripeTimeout", "list_sessions") because people and
assistants name the same thing in both spellings.
"""

from __future__ import annotations

import re

# Letters of any script: "Änderung", "paginação" and "перевод" are words, not fragments.
_IDENT = re.compile(r"[^\W\d_][^\W_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[¿¡ÀÁÂÄÇÈÉÊÍÓÔÖÚÜÑ])|\n+")


def wordset(text: str) -> frozenset[str]:
    """A word list written as prose, one frozenset."""
    return frozenset(text.split())


# Function words plus the verbs and fillers every request shares: keeping them
# would make any two requests look related.
STOPWORDS = wordset(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each few for from further had hadn has hasn have haven having he
    her here hers herself him himself his how i if in into is isn it its itself just let
    lets me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should shouldn so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was
    wasn we were weren what when where which while who whom why will with won would wouldn
    you your yours yourself yourselves ok okay yes yeah yep please thanks thank great nice
    cool good fine sure right well hmm ugh eh ah oh hey just really actually maybe still
    already again every get got go going gone make made do done did add added fix fixed run
    ran use used using change changed update updated check checked need needs want wants try
    tried look looks thing things stuff way ahead instead part bit one two three first
    second last next new old now then also like can could would should will shall might must
    may ll ve re don doesn isn aren wasn weren it's that's there's what's let's i'm i'll
    we're you're they're
    today tomorrow tonight yesterday morning afternoon evening weekend later soon
    """
)

# The commonest function words of the other languages people write to us in (German,
# French, Spanish, Portuguese): without them two turns in one language share "der", "les",
# "que" and look related, and a turn in another language never looks disjoint.
STOPWORDS |= wordset(
    """
    der die das den dem des ein eine einen einem einer und oder aber nicht auch noch schon
    mit von für bei aus nach auf ist sind war wir ihr sie ich du es bitte danke mal doch
    dann wenn dass wie was wer hier jetzt nur sehr gut
    le la les un une des du au aux et ou mais pas plus avec pour par sur dans est sont nous
    vous ils elle je tu ce cette ces qui que quoi merci bien très aussi encore
    el los las una unos unas y o pero con por para en es son nosotros yo tú este esta estos
    eso gracias bien muy también todavía ya
    os as uma umas um e ou mas não com por para em no na nos nas é são eu você isso este
    esta obrigado obrigada bem muito também ainda já
    """
)


def stem(word: str) -> str:
    """Strip common English suffixes; crude, but symmetric, which is all matching needs."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    for suffix in ("ing", "ed"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":
                w = w[:-1]
            return w
    if len(w) > 4 and w.endswith("es") and w[-3] in "sxz":
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    # "remove"/"removed"/"removing" all meet at "remov".
    return w[:-1] if len(w) > 4 and w.endswith("e") else w


def tokens(text: str) -> list[str]:
    """Lowercased word tokens, identifiers split on case and underscores."""
    out: list[str] = []
    for ident in _IDENT.findall(text):
        # identifiers are split on case; a word in another script is kept whole
        parts = (_CAMEL.findall(ident) if ident.isascii() else []) or [ident]
        out.extend(p.lower() for p in parts)
    return out


_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]\b")
_GENERIC_ACRONYMS = frozenset({"ok", "pr", "mr", "cr", "id", "it", "no", "so", "ai"})

# A stopword's other forms are stopwords too: "runs", "needs", "changes" share nothing.
_STOP_STEMS = frozenset(stem(w) for w in STOPWORDS)


def content_words(text: str) -> frozenset[str]:
    """Distinctive stems of a text: no stopwords, no very short tokens except acronyms (CI, DB)."""
    stems = (
        stem(t) for t in tokens(text) if len(t) >= 3 and t not in STOPWORDS and not t.isdigit()
    )
    words = {s for s in stems if s not in _STOP_STEMS}
    words.update(a.lower() for a in _ACRONYM.findall(text) if a.lower() not in _GENERIC_ACRONYMS)
    return frozenset(words)


# "#3301", "PR 81", "MR !12": a numbered reference names one piece of work exactly, which
# no shared word does, so it is kept as a word of its own ("#3301").
_REF = re.compile(
    r"(?<![\w&/#])(?:#|!|\b(?:pr|mr|cr|pull request|merge request|issue|ticket)\s*[#!]?\s*)"
    r"(\d{2,7})\b",
    re.IGNORECASE,
)

# "LUM-318", "OPS-4411", "FINOPS-210": a tracker's ticket key names one piece of work too.
_TICKET = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,9}-\d{1,6})(?![\w-])")


def refs(text: str) -> frozenset[str]:
    """Numbered references to a PR, MR, issue or ticket: "#<number>", or the ticket key."""
    keys = {k.lower() for k in _TICKET.findall(text)}
    return frozenset({"#" + n for n in _REF.findall(text)} | keys)


def sentences(text: str) -> list[str]:
    """Split into sentences and lines; code-ish dots (file.py, 2.4.1) do not split."""
    return [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]


def clip(text: str, limit: int) -> str:
    """One line, at most ``limit`` characters, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:-")
    if cut.count("`") % 2:  # a code span cut open: closed, or Markdown shows a stray "`"
        cut = cut[: limit - 2].rstrip() + "`"
    return cut + "\u2026"
