"""Passes 2 and 3: the runs they scan, and the shape of a bare AWS secret access key."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from typing import Final

# ── Pass 2: base64-encoded credentials ──
# The original is unanchored. Because the run is greedy, every original match starts at
# a run start anyway. The look-behind only stops the engine from re-trying mid-run.
B64_CHUNK_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}")

# ── Pass 3: bare 40-char AWS secret access key (entropy heuristic) ──
# Exact thresholds of the original (reference §4.3, pass 3).
BARE_SECRET_RUN_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}(?![A-Za-z0-9+/])")
SECRET_KEY_LEN: Final = 40
SECRET_ENTROPY_MIN: Final = 4.3
SECRET_MAX_LOWER_RUN: Final = 5
SECRET_MAX_VOWEL_RATIO: Final = 0.30
SECRET_PRINTABLE_DECODE_RATIO: Final = 0.85


# Pass 3 exemption (not in the original): base64 of a binary file is random-looking,
# so a window of an inline image passes every gate of a bare key. A run that starts
# with the base64 of a file signature, or follows a data URI's ";base64,", is a file.
BINARY_FILE_B64_PREFIXES: Final = (
    "iVBORw0KGg",  # PNG
    "/9j/",  # JPEG
    "R0lGOD",  # GIF
    "UklGR",  # RIFF (WebP, WAV)
    "JVBERi0",  # PDF
    "UEsDB",  # ZIP (docx, xlsx, jar)
    "H4sI",  # gzip
    "PD94bWwg",  # "<?xml " (SVG)
    "PHN2Zy",  # "<svg"
)
DATA_URI_BASE64_MARK: Final = ";base64,"


def is_base64_file(text: str, start: int, run: str) -> bool:
    """The base64 run at ``start`` encodes a file (inline image, archive), not a key."""
    if run.startswith(BINARY_FILE_B64_PREFIXES):
        return True
    mark = DATA_URI_BASE64_MARK
    return start >= len(mark) and text.startswith(mark, start - len(mark))


# ── Pass 3 shape predicates (the original's exact gates) ────────────────────

HEX_CHARS: Final = "0123456789abcdefABCDEF"
VOWELS: Final = frozenset("aeiouAEIOU")
_PRINTABLE_BYTES = bytes([*range(0x20, 0x7F), 0x09, 0x0A, 0x0D])


def shannon_entropy(token: str) -> float:
    """Shannon entropy of ``token`` in bits per character (the original's formula)."""
    counts = Counter(token)
    length = len(token)
    return -sum((c / length) * math.log2(c / length) for c in counts.values())


def decodes_to_printable_text(token: str) -> bool:
    """Base64-decodes (lenient padding) to ≥ 85 % printable bytes: encoded text, not a key."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=False)
    except (binascii.Error, ValueError):
        return False
    if not raw:
        return False
    printable = len(raw) - len(raw.translate(None, _PRINTABLE_BYTES))
    return printable / len(raw) >= SECRET_PRINTABLE_DECODE_RATIO


def longest_lowercase_run(token: str) -> int:
    best = current = 0
    for ch in token:
        current = current + 1 if ch.islower() else 0
        best = max(best, current)
    return best


def vowel_ratio(token: str) -> float:
    """Fraction of the letters that are vowels (0.0 without letters)."""
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for ch in letters if ch in VOWELS) / len(letters)


def looks_like_secret_key(token: str) -> bool:
    """One 40-char window has the shape of a bare AWS secret access key.

    Every gate must pass, and the bias is toward not redacting. A key has lower, upper
    and digit characters; it is not all hex (a git SHA or digest); its entropy is at
    least 4.3 bits/char; it does not decode to printable text; it has no lowercase run
    longer than 5 and a vowel ratio of at most 0.30. The last two reject camelCase
    identifiers and mixed-case paths.
    """
    if len(token) != SECRET_KEY_LEN:
        return False
    if not (
        any(c.islower() for c in token)
        and any(c.isupper() for c in token)
        and any(c.isdigit() for c in token)
    ):
        return False
    if not token.strip(HEX_CHARS):
        return False
    if shannon_entropy(token) < SECRET_ENTROPY_MIN:
        return False
    if decodes_to_printable_text(token):
        return False
    return (
        longest_lowercase_run(token) <= SECRET_MAX_LOWER_RUN
        and vowel_ratio(token) <= SECRET_MAX_VOWEL_RATIO
    )
