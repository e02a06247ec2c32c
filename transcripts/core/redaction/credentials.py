"""Credentials: passes 2 and 3, and passes 1-3 over one text as one round (no fixpoint)."""

from __future__ import annotations

import base64
import binascii
import math
import re
import sys
from bisect import bisect_right, insort
from collections.abc import Iterable

from . import patterns as P
from .finders import credential_spans
from .report import RedactionReport, apply_spans
from .views import View, might_contain_secret

_KEY_LEN = P.SECRET_KEY_LEN

# Entropy ≥ 4.3 bits needs at least 2**4.3 ≈ 19.7 distinct chars in the window.
_MIN_DISTINCT = math.ceil(2**P.SECRET_ENTROPY_MIN)
# With counts c_i over a 40-char window: H = log2(40) - S/40, where S = Σ c_i·log2 c_i.
_CLOG = [0.0] + [c * math.log2(c) for c in range(1, _KEY_LEN + 1)]
_S_MAX = _KEY_LEN * (math.log2(_KEY_LEN) - P.SECRET_ENTROPY_MIN)
# Slack for the float drift of the incremental S. A window inside the slack gets the
# exact original computation, so the prefilter never rejects what the original accepts.
_S_SLACK = 1e-6
# Per-character increments of the slide's five counts, 8 bits each (a window holds 40
# characters): lower, upper, digit, not hex, vowel (the top field).
_TALLY = [
    (1 if c.islower() else 1 << 8 if c.isupper() else 1 << 16 if c.isdigit() else 0)
    | (1 << 24 if c not in P.HEX_CHARS else 0)
    | (1 << 32 if c in P.VOWELS else 0)
    if c.isascii() and (c.isalnum() or c in "+/")
    else 0
    for c in map(chr, range(128))
]
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
    counts = [0] * 128
    clog, s_max, tally_of = _CLOG, _S_MAX + _S_SLACK, _TALLY
    s_sum = 0.0
    tally = 0
    for i, c in enumerate(data):
        if i >= k:  # data[i - k] leaves the window
            gone = data[i - k]
            cnt = counts[gone]
            s_sum += clog[cnt - 1] - clog[cnt]
            counts[gone] = cnt - 1
            tally -= tally_of[gone]
        cnt = counts[c]
        s_sum += clog[cnt + 1] - clog[cnt]
        counts[c] = cnt + 1
        tally += tally_of[c]
        s = i - k + 1  # the window run[s : s + k] is complete
        if s < 0 or blocked[s] or s_sum > s_max:
            continue
        lower, upper = tally & 0xFF, tally >> 8 & 0xFF
        if (
            lower
            and upper
            and tally >> 16 & 0xFF
            and tally >> 24 & 0xFF
            and not (tally >> 32) / (lower + upper) > P.SECRET_MAX_VOWEL_RATIO
            and P.looks_like_secret_key(run[s : s + k])
        ):
            return True
    return False


def decodes_to_credential(chunk: str) -> bool:
    """Pass 2: ``chunk`` strictly base64-decodes to text that pass 1 matches."""
    try:
        raw = base64.b64decode(chunk, validate=True)
    except (binascii.Error, ValueError):
        return False
    view = View(raw.decode("utf-8", errors="ignore"))
    return might_contain_secret(view) and bool(credential_spans(view, first_only=True))


def contains_fixed_credential(view: View, among: Iterable[int] | None = None) -> bool:
    """Pass 1 or pass 2 would fire. Not pass 3, whose entropy guess is too loose for URLs."""
    if not might_contain_secret(view):
        return False
    if credential_spans(view, first_only=True, among=among):
        return True
    win = view.windows
    return win is not None and any(
        decodes_to_credential(chunk) for _, _, chunk in win.long_matches(P.B64_CHUNK_RE)
    )


def _overlaps(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """[start, end) meets one of ``taken``, the sorted, disjoint spans replaced so far."""
    k = bisect_right(taken, (start, sys.maxsize))
    return (k > 0 and taken[k - 1][1] > start) or (k < len(taken) and taken[k][0] < end)


def credentials_round(text: str, view: View | None = None) -> tuple[str, RedactionReport]:
    view = view or View(text)
    if not might_contain_secret(view):
        return text, {}
    spans = credential_spans(view)
    win = view.windows
    if win is not None and win.long:
        # Passes 2 and 3 scan the original text, like the original, and skip a chunk
        # an earlier pass already replaced (the original's ``result.replace`` no longer
        # found it).
        taken = [(start, end) for start, end, _, _ in spans]  # pass 1's, in order
        for start, end, chunk in win.long_matches(P.B64_CHUNK_RE):
            if not _overlaps(taken, start, end) and decodes_to_credential(chunk):
                spans.append((start, end, P.ENCODED_KIND, P.ENCODED_CREDENTIAL_TAG))
                insort(taken, (start, end))
        for start, end, run in win.long_matches(P.BARE_SECRET_RUN_RE):
            if (
                not _overlaps(taken, start, end)
                and not P.is_base64_file(text, start, run)
                and contains_bare_secret(run)
            ):
                spans.append((start, end, P.BARE_AWS_KIND, P.CREDENTIAL_TAG))
                insort(taken, (start, end))
    if not spans:
        return text, {}
    return apply_spans(text, spans)
