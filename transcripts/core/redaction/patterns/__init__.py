"""What counts as a secret, for :mod:`transcripts.core.redaction` (which finds and replaces it).

Every credential rule has a kind name, which is the key used in the value-free report.
It also has a priority: its index in :data:`RULES`. When two rules match at the same
position, the rule with the lower index wins, exactly as with the original's single
alternation. :data:`RULES` is the original's table (:mod:`.original`) followed by the
extensions for current provider formats (:mod:`.extended`).

Rules come in two groups. The engine relies on this split for speed and for its
worst-case bound:

* **windowed** rules. Every match lies inside one maximal run of :data:`WINDOW_CHARS`
  that is at least :data:`WINDOW_MIN_RUN` long, and every look-around class is a
  subset of :data:`WINDOW_CHARS`. The engine therefore scans only those runs, joined by
  a newline, instead of the whole text. Prose has almost none. A newline fails every
  look-around exactly as the real neighbour (a non-window character) would, so the
  matches are identical.
* **full-text** rules. These can contain spaces, quotes or short bodies (key=value,
  PEM, JWT, URI userinfo, Bearer headers), so they run on the whole text. Each one is
  gated by literal anchors that any match must contain.

Adding or widening a rule: keep its match inside the window class and at least
``WINDOW_MIN_RUN`` long, or make it full-text with anchors that are a strict necessary
condition. ``tests/transcripts/test_redaction_rules.py`` checks both for every rule,
and ``test_redaction_finders.py`` checks that the engine's matches equal the
original's single alternation.

Also here: the pass 2 and pass 3 run patterns with the original's thresholds and shape
predicates (bare AWS secret key, :mod:`.secret_shape`), and the exfiltration-URL
patterns (reference §4.4, :mod:`.exfil`).

The engine reads every name through this package, so this is the one place to set
:data:`EXEMPT_EXACT_HOSTS`.
"""

from __future__ import annotations

from typing import Final

from .assignments import STRUCTURED_RULES
from .exfil import (
    EXFIL_PATTERNS_RE,
    EXFIL_PERCENT_RE,
    EXFIL_QUERY_MIN_LEN,
    HARD_CREDENTIAL_RE,
    MAX_URL_DECODE_PASSES,
    S3_PRESIGNED_PARAMS,
    S3_PRESIGNED_PARTS,
    S3_STRUCTURAL_VALIDATORS,
    URL_RE,
)
from .extended import EXTENDED_RULES
from .original import (
    JWT_HEAD_RE,
    JWT_TAIL_RE,
    ORIGINAL_RULES,
    PEM_END_RE,
    PEM_HEADER_RE,
    PEM_TRUNCATED_TAIL_RE,
)
from .rule import (
    BARE_AWS_KIND,
    CREDENTIAL_TAG,
    ENCODED_CREDENTIAL_TAG,
    ENCODED_KIND,
    EXFIL_KIND,
    EXFIL_TAG_PREFIX,
    USERINFO_TAIL,
    WINDOW_CHARS,
    WINDOW_MIN_RUN,
    Rule,
)
from .secret_shape import (
    B64_CHUNK_RE,
    BARE_SECRET_RUN_RE,
    HEX_CHARS,
    SECRET_ENTROPY_MIN,
    SECRET_KEY_LEN,
    SECRET_MAX_LOWER_RUN,
    SECRET_MAX_VOWEL_RATIO,
    SECRET_PRINTABLE_DECODE_RATIO,
    VOWELS,
    decodes_to_printable_text,
    is_base64_file,
    longest_lowercase_run,
    looks_like_secret_key,
    shannon_entropy,
    vowel_ratio,
)
from .vendors import PGP_END_RE, PGP_HEADER_RE, PGP_TRUNCATED_TAIL_RE, VENDOR_RULES

__all__ = [
    "B64_CHUNK_RE",
    "BARE_AWS_KIND",
    "BARE_SECRET_RUN_RE",
    "CREDENTIAL_TAG",
    "ENCODED_CREDENTIAL_TAG",
    "ENCODED_KIND",
    "EXEMPT_EXACT_HOSTS",
    "EXFIL_KIND",
    "EXFIL_PATTERNS_RE",
    "EXFIL_PERCENT_RE",
    "EXFIL_QUERY_MIN_LEN",
    "EXFIL_TAG_PREFIX",
    "FAST_PATH_ANCHORS",
    "FAST_PATH_LOWER_ANCHORS",
    "FULL_TEXT_RULES",
    "HARD_CREDENTIAL_RE",
    "HEX_CHARS",
    "JWT_HEAD_RE",
    "JWT_TAIL_RE",
    "MAX_URL_DECODE_PASSES",
    "PEM_END_RE",
    "PEM_HEADER_RE",
    "PEM_TRUNCATED_TAIL_RE",
    "PGP_END_RE",
    "PGP_HEADER_RE",
    "PGP_TRUNCATED_TAIL_RE",
    "RULES",
    "S3_PRESIGNED_PARAMS",
    "S3_PRESIGNED_PARTS",
    "S3_STRUCTURAL_VALIDATORS",
    "SECRET_ENTROPY_MIN",
    "SECRET_KEY_LEN",
    "SECRET_MAX_LOWER_RUN",
    "SECRET_MAX_VOWEL_RATIO",
    "SECRET_PRINTABLE_DECODE_RATIO",
    "URL_RE",
    "USERINFO_TAIL",
    "VOWELS",
    "WINDOWED_RULES",
    "WINDOW_CHARS",
    "WINDOW_MIN_RUN",
    "Rule",
    "decodes_to_printable_text",
    "is_base64_file",
    "longest_lowercase_run",
    "looks_like_secret_key",
    "shannon_entropy",
    "vowel_ratio",
]

# The structured rules come last: an assignment's span starts at its value, so a vendor
# token assigned to a key ties with it there, and the vendor rule (lower index) wins.
RULES: Final[tuple[Rule, ...]] = ORIGINAL_RULES + EXTENDED_RULES + VENDOR_RULES + STRUCTURED_RULES

WINDOWED_RULES: Final = tuple(i for i, r in enumerate(RULES) if r.windowed)
FULL_TEXT_RULES: Final = tuple(i for i, r in enumerate(RULES) if not r.windowed)

# The fast path's literals. Every full-text rule's match contains one of them, or
# contains a window run (≥ WINDOW_MIN_RUN window chars), which the fast path also
# checks. "SecretAccessKey" (15 chars) is such a run, for example; "AccessKeyId" (11)
# is not, so it is listed here. Tests check this for every full-text rule.
# "EyJ" is a JWT with its first letter capitalised; "Q~" marks Azure AD client secrets.
# The lowercase anchors gate the header and assignment rules ("pass" covers password,
# passwd, passphrase; "key" every *_key name).
FAST_PATH_ANCHORS: Final = ("://", "eyJ", "EyJ", "-----BEGIN ", "Token", "AccessKeyId", "Q~")
FAST_PATH_LOWER_ANCHORS: Final = (
    "authorization",
    "cookie",
    "pass",
    "pwd",
    "secret",
    "key",
    "token",
    # command-line passwords (``mysql -pS3cret``, ``redis-cli -a``, ``docker login -p``)
    *("mysql", "mariadb", "sshpass", "redis-cli", "login", "curl"),
)

# Companion-supplied exact hosts (lowercase) that skip only the base64/length query
# heuristics. None by default. Fixed credentials, decoding and percent-encoding still
# apply to them. The engine reads it from this package at call time, so it is set
# here (not in :mod:`.exfil`).
EXEMPT_EXACT_HOSTS: Final[frozenset[str]] = frozenset()
