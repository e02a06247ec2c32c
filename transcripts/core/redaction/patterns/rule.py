"""The vocabulary of the pattern tables: tags, report kinds, windows and :class:`Rule`.

Shared by the original table (:mod:`.original`), the extensions (:mod:`.extended`) and
the exfiltration-URL patterns (:mod:`.exfil`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Final, Literal, NamedTuple

CREDENTIAL_TAG: Final = "[REDACTED: credential]"
ENCODED_CREDENTIAL_TAG: Final = "[REDACTED: encoded credential]"
EXFIL_TAG_PREFIX: Final = "[REDACTED: suspicious URL to "

ENCODED_KIND: Final = "encoded_credential"
BARE_AWS_KIND: Final = "aws_secret_access_key_bare"
EXFIL_KIND: Final = "exfil_url"

# ── Windows ──────────────────────────────────────────────────────────────────
# The characters a windowed rule may match or look at. ':' and '/' are included so
# Telegram tokens and Slack webhook URLs stay local; the price is that URLs and paths
# become windows too, which only costs scan time on those spans.
WINDOW_CHARS: Final = string.ascii_letters + string.digits + "_.+/=:-"
# The shortest windowed match (a Slack ``xoxb-`` token with its 10-char floor) is 15.
WINDOW_MIN_RUN: Final = 15


class Rule(NamedTuple):
    """One credential rule of pass 1."""

    kind: str
    pattern: re.Pattern[str]
    # "regex": pattern.search; the others are linear-time finders in the engine that
    # reproduce the pattern's leftmost match without its quadratic re-scans.
    # "assign", "cookie", "anyscheme" and "cli" are the structured finders of :mod:`.structured`
    # ("pgp" is the PEM finder with the PGP armour lines).
    finder: Literal["regex", "pem", "pgp", "jwt", "scheme", "assign", "cookie", "anyscheme", "cli"]
    windowed: bool
    # Literals of which every match contains at least one. The rule is skipped when
    # none of them occurs. A windowed rule without anchors runs whenever there are
    # windows. Windowed rules test them on the joined windows; full-text
    # rules test them on the text (with ``anchor_lower``: on its ASCII-lowercased
    # form). Tests check that each rule's positive examples contain an anchor.
    anchors: tuple[str, ...] = ()
    anchor_lower: bool = False
    # "scheme" finder only: every literal scheme the pattern's alternation accepts.
    schemes: tuple[str, ...] = ()
    # "regex" finder only: a match is a credential only if this accepts its text. A
    # rejected match is skipped and the search resumes one character later, so the rule
    # behaves as if its language were the pattern's minus the rejected strings.
    validate: Callable[[str], bool] | None = None
    # Windowed rules without anchors only: a pattern every match contains (a literal
    # first, so the engine skips to it in C). The rule is skipped when the gate finds
    # nothing in the joined windows. It replaces an anchor where the only literal
    # (":", ".", "-") is too common to rule anything out on its own.
    gate: re.Pattern[str] | None = None


def windowed_rule(
    kind: str,
    pattern: str,
    *anchors: str,
    capital: bool = True,
    validate: Callable[[str], bool] | None = None,
    gate: str | None = None,
) -> Rule:
    """A windowed regex rule.

    ``capital``: a pattern that starts with a lowercase ASCII letter also accepts that
    letter capitalised, and each such anchor gets its capitalised twin. Summarizers
    and editors capitalise the first letter of a line (``Ghp_…``, ``Sk-ant-…``); the
    rest of the token is unchanged and still a live credential. Only the first letter
    is folded: the other letters keep the vendor's exact case, so this admits no new
    shape of ordinary text. Patterns whose look-behind repeats the prefix pass
    ``capital=False`` (the look-behind would no longer see the capital).
    """
    first = pattern[:1]
    if capital and first.isascii() and first.islower():
        pattern = f"[{first}{first.upper()}]{pattern[1:]}"
        anchors += tuple(a[0].upper() + a[1:] for a in anchors if a[:1].islower())
    return Rule(
        kind,
        re.compile(pattern),
        "regex",
        True,
        anchors,
        validate=validate,
        gate=None if gate is None else re.compile(gate),
    )


# The AWS key=value forms tolerate JSON quoting. The value stops at JSON delimiters
# so compact JSON ``{"aws_secret_access_key":"S","region":"x"}`` keeps its other fields.
KV_VALUE = r"""["']?\s*[:=]\s*["']?[^\s"',}]+"""

# ``scheme://user:pass@``: the tail after "://" of both URI-credential rules.
USERINFO_TAIL: Final = r"[^\s:/@]*:[^\s/@]+@"
