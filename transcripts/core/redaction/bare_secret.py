"""Pass 3: a bare 40-char AWS secret access key somewhere in a base64 run."""

from __future__ import annotations

import math
import re

from . import patterns as P

_KEY_LEN = P.SECRET_KEY_LEN

# Entropy ≥ 4.3 bits needs at least 2**4.3 ≈ 19.7 distinct chars in the window.
_MIN_DISTINCT = math.ceil(2**P.SECRET_ENTROPY_MIN)
# With counts c_i over a 40-char window: H = log2(40) - S/40, where S = Σ c_i·log2 c_i.
_CLOG = [0.0] + [c * math.log2(c) for c in range(1, _KEY_LEN + 1)]
_S_MAX = _KEY_LEN * (math.log2(_KEY_LEN) - P.SECRET_ENTROPY_MIN)
# Slack for the float drift of the incremental S. A window inside the slack gets the
# exact original computation, so the prefilter never rejects what the original accepts.
_S_SLACK = 1e-6
# Per-character flags for the slide: 1 lower, 2 upper, 4 digit, 8 not hex, 16 vowel.
_FLAGS = bytes(
    (1 if c.islower() else 2 if c.isupper() else 4 if c.isdigit() else 0)
    | (8 if c not in P.HEX_CHARS else 0)
    | (16 if c in P.VOWELS else 0)
    if c.isascii() and (c.isalnum() or c in "+/")
    else 0
    for c in map(chr, range(256))
)
_LOWER_RUN_RE = re.compile(f"[a-z]{{{P.SECRET_MAX_LOWER_RUN + 1},}}")


def contains_bare_secret(run: str) -> bool:
    """Pass 3: some 40-char window of ``run`` passes every gate.

    The original slides a window so that a key glued to other base64 characters is
    still caught.
    """
    n = len(run)
    if n < _KEY_LEN:
        return False
    # Run-level necessary conditions, cheapest first. Every window is a substring of
    # the run, so a run that fails one of them has no passing window. This rejects
    # git SHAs, 1 MB of "A", digits, hex or low-alphabet filler without decoding or
    # sliding.
    if run.upper() == run or run.lower() == run or not any(d in run for d in "0123456789"):
        return False
    if not run.strip(P.HEX_CHARS) or len(set(run)) < _MIN_DISTINCT:
        return False
    if P.decodes_to_printable_text(run):  # the whole run is encoded text
        return False
    if n == _KEY_LEN:
        return P.looks_like_secret_key(run)
    return _slide_for_secret(run)


def _slide_for_secret(run: str) -> bool:
    # Incremental prefilter over every window start, O(1) per step instead of O(40).
    # A window that passes it gets the exact original check, so the answer is the
    # original's.
    k, n = _KEY_LEN, len(run)
    starts = n - k + 1
    # A lowercase run of ≥ 6 rejects every window that shares ≥ 6 chars with it.
    blocked = bytearray(starts)
    limit = P.SECRET_MAX_LOWER_RUN + 1
    for m in _LOWER_RUN_RE.finditer(run):
        lo, hi = max(0, m.start() - (k - limit)), min(starts, m.end() - limit + 1)
        if hi > lo:
            blocked[lo:hi] = b"\x01" * (hi - lo)
    data = run.encode("ascii")
    flags = data.translate(_FLAGS)
    counts = [0] * 128
    clog, s_max = _CLOG, _S_MAX + _S_SLACK
    s_sum = 0.0
    lower = upper = digit = nonhex = vowel = 0
    for i in range(k):
        c = data[i]
        cnt = counts[c]
        s_sum += clog[cnt + 1] - clog[cnt]
        counts[c] = cnt + 1
        f = flags[i]
        lower += f & 1
        upper += f >> 1 & 1
        digit += f >> 2 & 1
        nonhex += f >> 3 & 1
        vowel += f >> 4 & 1
    s = 0
    while True:
        if (
            not blocked[s]
            and lower
            and upper
            and digit
            and nonhex
            and s_sum <= s_max
            and not vowel / (lower + upper) > P.SECRET_MAX_VOWEL_RATIO
            and P.looks_like_secret_key(run[s : s + k])
        ):
            return True
        if s + 1 == starts:
            return False
        c = data[s]  # leaves the window
        cnt = counts[c]
        s_sum += clog[cnt - 1] - clog[cnt]
        counts[c] = cnt - 1
        f = flags[s]
        lower -= f & 1
        upper -= f >> 1 & 1
        digit -= f >> 2 & 1
        nonhex -= f >> 3 & 1
        vowel -= f >> 4 & 1
        c = data[s + k]  # enters the window
        cnt = counts[c]
        s_sum += clog[cnt + 1] - clog[cnt]
        counts[c] = cnt + 1
        f = flags[s + k]
        lower += f & 1
        upper += f >> 1 & 1
        digit += f >> 2 & 1
        nonhex += f >> 3 & 1
        vowel += f >> 4 & 1
        s += 1
