"""Credential and exfiltration-URL redaction (pure: standard library only, no Django).

A port of the original's ``redact_credentials`` and ``redact_exfiltration_urls``
(reference §4.3 and §4.4), with current provider token formats added. It runs at the
transcript write boundary on every non-user row and revision patch
(:func:`redact_text`, :func:`redact_value`), and in the summaries app on model-written
payloads (:func:`redact_payload`).

Design, in the order a call meets it:

* **Fast path.** :func:`_might_contain_secret` makes a few C-speed checks on a
  latin-1 view of the text (one byte per code point, so offsets match). It looks for
  "://", "eyJ", the anchors of the full-text rules, case-folded "authorization", and a
  run of 15+ token characters. Plain prose fails all of them and comes back unchanged,
  with no regex run.
* **Pass 1** (the pattern table) emulates the original's single alternation: the
  leftmost match wins, and on a tie the lower rule index wins. Each rule runs
  separately, and a merge loop (:func:`_credential_spans`) picks the matches in the
  order the alternation would. Windowed rules scan only the long token runs
  (:class:`_Windows`). Full-text rules run only when their anchors are present.
* **Passes 2 and 3** (base64-encoded credentials; bare AWS secret keys) run on the
  original text's runs and skip anything an earlier pass already covers, as the
  original's ``result.replace`` did.
* **Fixpoint.** A replacement can change a neighbour's boundary (a tag ends in "]",
  which satisfies a look-behind the original character did not), so one round is
  not always idempotent. Every public entry point repeats its round until nothing
  matches. That takes at most :data:`_MAX_ROUNDS` rounds; in practice two when
  something was found, one otherwise.

Worst-case cost is linear in practice. No pattern backtracks catastrophically. The
patterns that re-scan quadratically in the original (JWT, Telegram, PEM without END,
the S3 presigned regex) have linear finders that return the same matches. The pass-3
window slide is incremental.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, unquote_plus

from transcripts.core import redaction_patterns as P

__all__ = [
    "RedactionReport",
    "merge_reports",
    "redact_credentials",
    "redact_exfiltration_urls",
    "redact_payload",
    "redact_text",
    "redact_value",
]

RedactionReport = dict[str, int]
"""Value-free report: kind name -> number of redactions. Never holds secret text."""

# A found span: (start, end, kind, replacement tag).
_Span = tuple[int, int, str, str]
# A pass-1 finder: leftmost (start, end) at or after ``pos``, or None when exhausted.
_Finder = Callable[[int], tuple[int, int] | None]

# Every round that changes the text replaces at least one span with a tag that no rule
# matches, so the loop converges. The cap bounds the cost on a crafted input that
# unlocks one new match per round. Realistic text needs at most two rounds.
_MAX_ROUNDS = 16

_WINDOW_MAP = bytes(1 if chr(i) in P.WINDOW_CHARS else 0 for i in range(256))
_WINDOW_NEEDLE = b"\x01" * P.WINDOW_MIN_RUN
_FAST_ANCHORS = tuple(a.encode("latin-1") for a in P.FAST_PATH_ANCHORS)
_FAST_LOWER_ANCHORS = tuple(a.encode("latin-1") for a in P.FAST_PATH_LOWER_ANCHORS)
_FULL_TEXT_ANCHORS = {i: tuple(a.encode("latin-1") for a in P.RULES[i].anchors) for i in P.FULL_TEXT_RULES}


def _windowed_anchor_index() -> tuple[tuple[str, tuple[int, ...]], ...]:
    by_anchor: dict[str, list[int]] = {}
    for i in P.WINDOWED_RULES:
        for anchor in P.RULES[i].anchors:
            by_anchor.setdefault(anchor, []).append(i)
    return tuple((a, tuple(rules)) for a, rules in by_anchor.items())


# Distinct windowed-rule anchors, each tested once per text (on the joined windows).
_WINDOWED_ANCHORS = _windowed_anchor_index()


# ── Text views ───────────────────────────────────────────────────────────────


class _Windows:
    """The maximal runs of window characters (≥ WINDOW_MIN_RUN), joined by newlines.

    A windowed rule's match always lies inside one run. Scanning ``joined`` finds the
    same matches as scanning the text, at the cost of the runs only.
    """

    __slots__ = ("joined", "jstarts", "oends", "ostarts")

    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        self.ostarts = [s for s, _ in spans]
        self.oends = [e for _, e in spans]
        self.jstarts: list[int] = []
        offset = 0
        for s, e in spans:
            self.jstarts.append(offset)
            offset += e - s + 1
        self.joined = "\n".join(text[s:e] for s, e in spans)

    def to_orig(self, j: int) -> int:
        k = bisect_right(self.jstarts, j) - 1
        return self.ostarts[k] + j - self.jstarts[k]

    def to_joined(self, pos: int) -> int:
        """The joined index of the first window character at or after text offset ``pos``."""
        k = bisect_right(self.ostarts, pos) - 1
        if k >= 0 and pos < self.oends[k]:
            return self.jstarts[k] + pos - self.ostarts[k]
        k += 1
        return self.jstarts[k] if k < len(self.jstarts) else len(self.joined)

    def matches(self, pattern: re.Pattern[str], min_len: int) -> Iterator[tuple[int, int, str]]:
        """``pattern`` matches (text start, text end, matched text) in windows ≥ ``min_len``.

        Each window is scanned with pos/endpos, so look-arounds at its edges see the
        joining newline or the string end. Both fail every class a window char
        satisfies, exactly as the real neighbour does.
        """
        for k, jstart in enumerate(self.jstarts):
            ostart = self.ostarts[k]
            length = self.oends[k] - ostart
            if length < min_len:
                continue
            for m in pattern.finditer(self.joined, jstart, jstart + length):
                s = ostart + m.start() - jstart
                yield s, s + m.end() - m.start(), m.group()


class _View:
    """One text and the lazily built byte views that the gates and windows use."""

    __slots__ = ("_lower", "_present", "_windows", "_windows_done", "raw", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        # One byte per code point, so byte offsets are text offsets. Anything outside
        # latin-1 becomes "?", which no anchor contains and no window class admits.
        self.raw = text.encode("latin-1", "replace")
        self._lower: bytes | None = None
        self._windows: _Windows | None = None
        self._windows_done = False
        self._present: dict[bytes, bool] = {}

    @property
    def lower(self) -> bytes:
        if self._lower is None:
            self._lower = self.raw.lower()  # ASCII-only folding, like the bearer rule
        return self._lower

    @property
    def windows(self) -> _Windows | None:
        if not self._windows_done:
            self._windows_done = True
            mapped = self.raw.translate(_WINDOW_MAP)
            spans: list[tuple[int, int]] = []
            pos = mapped.find(_WINDOW_NEEDLE)
            while pos >= 0:
                end = mapped.find(b"\x00", pos + P.WINDOW_MIN_RUN)
                if end < 0:
                    end = len(mapped)
                spans.append((pos, end))
                pos = mapped.find(_WINDOW_NEEDLE, end)
            self._windows = _Windows(self.text, spans) if spans else None
        return self._windows

    def has(self, anchor: bytes, *, lower: bool = False) -> bool:
        key = b"\x00" + anchor if lower else anchor  # no anchor contains NUL
        found = self._present.get(key)
        if found is None:
            found = self._present[key] = anchor in (self.lower if lower else self.raw)
        return found


def _might_contain_secret(view: _View) -> bool:
    """A sound necessary condition for any redaction (credential or exfil URL).

    Every rule's match contains a fast-path anchor or a window run (see
    ``FAST_PATH_ANCHORS``), every exfil URL contains "://", and passes 2 and 3 need a
    40-char run, which is a window.
    """
    return (
        any(view.has(a) for a in _FAST_ANCHORS)
        or any(view.has(a, lower=True) for a in _FAST_LOWER_ANCHORS)
        or view.windows is not None
    )


# ── Pass 1 finders ───────────────────────────────────────────────────────────


def _windowed_finder(rule: P.Rule, win: _Windows) -> _Finder:
    pattern, joined = rule.pattern, win.joined

    def find(pos: int) -> tuple[int, int] | None:
        m = pattern.search(joined, win.to_joined(pos))
        if m is None:
            return None
        start = win.to_orig(m.start())
        return start, start + m.end() - m.start()

    return find


def _regex_finder(rule: P.Rule, text: str) -> _Finder:
    pattern = rule.pattern

    def find(pos: int) -> tuple[int, int] | None:
        m = pattern.search(text, pos)
        return None if m is None else m.span()

    return find


def _pem_finder(text: str) -> _Finder:
    # The lazy body ``[\s\S]*?-----END…`` reaches the first END marker after the
    # header. Many headers without an END would make each attempt scan to the end of
    # the text (quadratic). The next END at or after x is the same for every x up to
    # that END's start, so one cached search serves all headers before it.
    end_cache: list[tuple[int, tuple[int, int] | None]] = []

    def next_end(x: int) -> tuple[int, int] | None:
        if end_cache:
            searched_from, found = end_cache[0]
            if searched_from <= x and (found is None or x <= found[0]):
                return found
        m = P.PEM_END_RE.search(text, x)
        found = None if m is None else m.span()
        end_cache[:] = [(x, found)]
        return found

    def find(pos: int) -> tuple[int, int] | None:
        m = P.PEM_HEADER_RE.search(text, pos)
        if m is None:
            return None
        end = next_end(m.end())
        if end is not None:
            return m.start(), end[1]
        tail = P.PEM_TRUNCATED_TAIL_RE.match(text, m.end())
        return m.start(), tail.end() if tail else m.end()

    return find


def _jwt_finder(text: str) -> _Finder:
    # A match needs ``eyJ`` + non-empty body + 2..4 dot segments. The body cannot
    # contain a dot, so it always ends where the token-character run ends. Whether a
    # match succeeds depends only on what follows that run. If the first "eyJ" of a run
    # fails, every later "eyJ" in the same run fails too, so skip to the run end. This
    # keeps the scan linear on "eyJeyJeyJ…" (the literal pattern is quadratic there).
    def find(pos: int) -> tuple[int, int] | None:
        while True:
            head = P.JWT_HEAD_RE.search(text, pos)
            if head is None:
                return None
            if head.end() > head.start() + 3:
                tail = P.JWT_TAIL_RE.match(text, head.end())
                if tail is not None:
                    return head.start(), tail.end()
            pos = head.end()

    return find


def _scheme_finder(rule: P.Rule, text: str) -> _Finder:
    # ``(scheme-alternation)://…`` with the scheme unanchored: search for "://" (a
    # literal search), then try the schemes that end there, longest (leftmost) first.
    # The rest of the pattern is the same for every scheme, so the first one that
    # matches is the leftmost match.
    schemes = sorted(rule.schemes, key=len, reverse=True)
    pattern = rule.pattern

    def find(pos: int) -> tuple[int, int] | None:
        i = text.find("://", pos)
        while i >= 0:
            for scheme in schemes:
                start = i - len(scheme)
                if start >= pos and text.startswith(scheme, start):
                    m = pattern.match(text, start)
                    if m is not None:
                        return m.span()
                    break
            i = text.find("://", i + 1)
        return None

    return find


def _active_finders(view: _View) -> list[tuple[int, _Finder]]:
    """(rule index, finder) for every rule whose anchors occur in this text."""
    text = view.text
    found: list[tuple[int, _Finder]] = []
    win = view.windows
    if win is not None:
        joined = win.joined
        active: set[int] = set()
        for anchor, rules in _WINDOWED_ANCHORS:
            if anchor in joined:
                active.update(rules)
        found.extend((i, _windowed_finder(P.RULES[i], win)) for i in active)
    for i, anchors in _FULL_TEXT_ANCHORS.items():
        rule = P.RULES[i]
        if not any(view.has(a, lower=rule.anchor_lower) for a in anchors):
            continue
        if rule.finder == "pem":
            found.append((i, _pem_finder(text)))
        elif rule.finder == "jwt":
            found.append((i, _jwt_finder(text)))
        elif rule.finder == "scheme":
            found.append((i, _scheme_finder(rule, text)))
        else:
            found.append((i, _regex_finder(rule, text)))
    return found


def _credential_spans(view: _View, *, first_only: bool = False) -> list[_Span]:
    """Pass 1: the matches the original's single alternation would make, left to right.

    Each rule keeps its next match (its "head"). The winner is the smallest start, and
    on a tie the lowest rule index (alternation order). After the winner, any head that
    starts before its end is searched again from the end. That is what the alternation
    does when it resumes there.
    """
    heads: list[tuple[int, int, int, _Finder]] = []  # start, rule index, end, finder
    for index, finder in _active_finders(view):
        head = finder(0)
        if head is not None:
            heads.append((head[0], index, head[1], finder))
    spans: list[_Span] = []
    pos = 0
    while heads:
        fresh: list[tuple[int, int, int, _Finder]] = []
        for start, index, end, finder in heads:
            if start < pos:
                head = finder(pos)
                if head is None:
                    continue  # exhausted: no match at or after pos, nor later
                start, end = head
            fresh.append((start, index, end, finder))
        heads = fresh
        if not heads:
            break
        start, index, end, _ = min(heads, key=lambda h: (h[0], h[1]))
        spans.append((start, end, P.RULES[index].kind, P.CREDENTIAL_TAG))
        if first_only:
            break
        pos = end
    return spans


def _contains_plain_credential(text: str) -> bool:
    view = _View(text)
    return _might_contain_secret(view) and bool(_credential_spans(view, first_only=True))


# ── Pass 2: base64-encoded credentials ───────────────────────────────────────


def _decodes_to_credential(chunk: str) -> bool:
    try:
        raw = base64.b64decode(chunk, validate=True)
    except (binascii.Error, ValueError):
        return False
    return _contains_plain_credential(raw.decode("utf-8", errors="ignore"))


def _contains_fixed_credential(text: str) -> bool:
    """Pass 1 or pass 2 would fire. Not pass 3, whose entropy guess is too loose for URLs."""
    view = _View(text)
    if not _might_contain_secret(view):
        return False
    if _credential_spans(view, first_only=True):
        return True
    win = view.windows
    return win is not None and any(
        _decodes_to_credential(chunk) for _, _, chunk in win.matches(P.B64_CHUNK_RE, _KEY_LEN)
    )


# ── Pass 3: bare AWS secret access keys ──────────────────────────────────────

_KEY_LEN = P.SECRET_KEY_LEN
_HEX = "0123456789abcdefABCDEF"
_VOWELS = frozenset("aeiouAEIOU")
_PRINTABLE = bytes([*range(0x20, 0x7F), 0x09, 0x0A, 0x0D])
# A window needs entropy ≥ 4.3 bits, which needs at least 2**4.3 ≈ 19.7 distinct chars.
_MIN_DISTINCT = math.ceil(2**P.SECRET_ENTROPY_MIN)
# With counts c_i over a 40-char window: H = log2(40) - S/40, where S = Σ c_i·log2 c_i.
_CLOG = [0.0] + [c * math.log2(c) for c in range(1, _KEY_LEN + 1)]
_S_MAX = _KEY_LEN * (math.log2(_KEY_LEN) - P.SECRET_ENTROPY_MIN)
# Slack for the float drift of the incremental S. A window inside the slack gets the
# exact original computation, so the prefilter never rejects a window the original
# accepts.
_S_SLACK = 1e-6


def _shannon_entropy(token: str) -> float:
    counts = Counter(token)
    length = len(token)
    return -sum((c / length) * math.log2(c / length) for c in counts.values())


def _decodes_to_printable_text(token: str) -> bool:
    """Base64-decodes (lenient padding) to ≥ 85 % printable bytes: encoded text, not a key."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=False)
    except (binascii.Error, ValueError):
        return False
    if not raw:
        return False
    printable = len(raw) - len(raw.translate(None, _PRINTABLE))
    return printable / len(raw) >= P.SECRET_PRINTABLE_DECODE_RATIO


def _longest_lowercase_run(token: str) -> int:
    best = current = 0
    for ch in token:
        current = current + 1 if ch.islower() else 0
        best = max(best, current)
    return best


def _vowel_ratio(token: str) -> float:
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for ch in letters if ch in _VOWELS) / len(letters)


def _looks_like_secret_key(token: str) -> bool:
    """The original's exact gates for one 40-char window (reference §4.3, pass 3)."""
    if len(token) != _KEY_LEN:
        return False
    if not (
        any(c.islower() for c in token)
        and any(c.isupper() for c in token)
        and any(c.isdigit() for c in token)
    ):
        return False
    if not token.strip(_HEX):
        return False
    if _shannon_entropy(token) < P.SECRET_ENTROPY_MIN:
        return False
    if _decodes_to_printable_text(token):
        return False
    return (
        _longest_lowercase_run(token) <= P.SECRET_MAX_LOWER_RUN
        and _vowel_ratio(token) <= P.SECRET_MAX_VOWEL_RATIO
    )


def _contains_bare_secret(run: str) -> bool:
    """Some 40-char window of ``run`` passes every gate (the original slides a window
    so that a key glued to other base64 characters is still caught)."""
    n = len(run)
    if n < _KEY_LEN or _decodes_to_printable_text(run):
        return False
    # Run-level necessary conditions. Every window is a substring of the run, so if
    # the run fails one of these, no window can pass. This rejects 1 MB of "A", digits,
    # hex or low-alphabet filler without sliding.
    if run.upper() == run or run.lower() == run or not any(d in run for d in "0123456789"):
        return False
    if not run.strip(_HEX) or len(set(run)) < _MIN_DISTINCT:
        return False
    if n == _KEY_LEN:
        return _looks_like_secret_key(run)
    return _slide_for_secret(run)


def _slide_for_secret(run: str) -> bool:
    # Incremental prefilter over every window start. A window that passes the counts
    # below gets the exact original check (_looks_like_secret_key), so the result is
    # the original's. The prefilter only saves the per-window recount: O(1) per step
    # instead of O(40).
    n = len(run)
    starts = n - _KEY_LEN + 1
    # A lowercase run of ≥ 6 blocks every window that shares ≥ 6 chars with it.
    blocked = bytearray(starts)
    limit = P.SECRET_MAX_LOWER_RUN + 1
    i = 0
    while i < n:
        if run[i].islower():
            j = i
            while j < n and run[j].islower():
                j += 1
            if j - i >= limit:
                lo, hi = max(0, i - (_KEY_LEN - limit)), min(starts, j - limit + 1)
                if hi > lo:
                    blocked[lo:hi] = b"\x01" * (hi - lo)
            i = j
        else:
            i += 1

    counts = dict.fromkeys(run, 0)
    s_sum = 0.0
    lower = upper = digit = nonhex = vowel = 0

    def step(ch: str, delta: int) -> None:
        nonlocal s_sum, lower, upper, digit, nonhex, vowel
        c = counts[ch]
        s_sum += _CLOG[c + delta] - _CLOG[c]
        counts[ch] = c + delta
        if ch.islower():
            lower += delta
        elif ch.isupper():
            upper += delta
        else:
            digit += delta if ch.isdigit() else 0
        if ch not in _HEX:
            nonhex += delta
        if ch in _VOWELS:
            vowel += delta

    for ch in run[:_KEY_LEN]:
        step(ch, 1)
    for s in range(starts):
        if s:
            step(run[s - 1], -1)
            step(run[s + _KEY_LEN - 1], 1)
        if blocked[s] or not (lower and upper and digit and nonhex):
            continue
        if s_sum > _S_MAX + _S_SLACK:
            continue
        letters = lower + upper
        if letters and vowel / letters > P.SECRET_MAX_VOWEL_RATIO:
            continue
        if _looks_like_secret_key(run[s : s + _KEY_LEN]):
            return True
    return False


# ── Credentials (passes 1-3), one round ──────────────────────────────────────


class _Taken:
    """Sorted, disjoint spans already replaced by an earlier pass."""

    __slots__ = ("ends", "starts")

    def __init__(self, spans: list[_Span]) -> None:
        self.starts = [s[0] for s in spans]
        self.ends = [s[1] for s in spans]

    def overlaps(self, start: int, end: int) -> bool:
        k = bisect_right(self.starts, start)
        if k > 0 and self.ends[k - 1] > start:
            return True
        return k < len(self.starts) and self.starts[k] < end

    def add(self, start: int, end: int) -> None:
        k = bisect_right(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


def _apply(text: str, spans: list[_Span]) -> tuple[str, RedactionReport]:
    spans.sort()
    parts: list[str] = []
    report: RedactionReport = {}
    last = 0
    for start, end, kind, tag in spans:
        parts.append(text[last:start])
        parts.append(tag)
        report[kind] = report.get(kind, 0) + 1
        last = end
    parts.append(text[last:])
    return "".join(parts), report


def _credentials_round(text: str, view: _View | None = None) -> tuple[str, RedactionReport]:
    view = view or _View(text)
    if not _might_contain_secret(view):
        return text, {}
    spans = _credential_spans(view)
    win = view.windows
    if win is not None:
        # Passes 2 and 3 scan the original text, like the original, and skip any chunk
        # an earlier pass already replaced (the original's ``result.replace`` found
        # nothing to replace there).
        taken = _Taken(spans)
        for start, end, chunk in win.matches(P.B64_CHUNK_RE, _KEY_LEN):
            if not taken.overlaps(start, end) and _decodes_to_credential(chunk):
                spans.append((start, end, P.ENCODED_KIND, P.ENCODED_CREDENTIAL_TAG))
                taken.add(start, end)
        for start, end, run in win.matches(P.BARE_SECRET_RUN_RE, _KEY_LEN):
            if not taken.overlaps(start, end) and _contains_bare_secret(run):
                spans.append((start, end, P.BARE_SECRET_KIND, P.CREDENTIAL_TAG))
                taken.add(start, end)
    if not spans:
        return text, {}
    return _apply(text, spans)


# ── Exfiltration URLs, one round ─────────────────────────────────────────────


def _is_safe_presigned(domain: str, query: str) -> bool:
    """A valid S3 presigned URL with only the standard, structurally valid parameters."""
    if not domain.endswith(".amazonaws.com"):
        return False
    pos = 0
    for part in P.S3_PRESIGNED_PARTS:  # the original's ``A.*B.*C.*D``, chained
        m = part.search(query, pos)
        if m is None:
            return False
        pos = m.end()
    params = parse_qs(query, keep_blank_values=True)
    if not P.S3_PRESIGNED_PARAMS.issuperset(params):
        return False
    for key, values in params.items():
        validator = P.S3_STRUCTURAL_VALIDATORS.get(key)
        for value in values:
            if validator is not None:
                if not validator.match(value):
                    return False
            elif P.EXFIL_PATTERNS_RE.search(value):
                return False
    return True


def _url_is_suspicious(domain: str, port: str, path_and_query: str) -> bool:
    """The original's per-URL verdict (reference §4.4). Apart from the presigned
    exemption, the checks are a plain OR, so the cheap ones run first."""
    qmark = path_and_query.find("?")
    query = path_and_query[qmark + 1 :] if qmark != -1 else ""
    if query and _is_safe_presigned(domain, query):
        return False
    if P.EXFIL_PERCENT_RE.search(path_and_query):
        return True
    if qmark != -1:
        heuristic_query = "" if domain.lower() in P.EXEMPT_EXACT_HOSTS else query
        if heuristic_query and (
            len(heuristic_query) >= P.EXFIL_QUERY_MIN_LEN
            or P.EXFIL_PATTERNS_RE.search(heuristic_query)
            or P.EXFIL_PATTERNS_RE.search(unquote_plus(heuristic_query))
        ):
            return True
    if P.HARD_CREDENTIAL_RE.search(path_and_query):
        return True
    payload = domain + port + path_and_query
    # Decode until stable, up to 3 rounds (a double-encoded payload survives one).
    # A payload that is still decodable after the budget was never seen in
    # plaintext, so it is flagged.
    decoded = payload
    for _ in range(P.MAX_URL_DECODE_PASSES):
        nxt = unquote_plus(decoded)
        if nxt == decoded:
            break
        decoded = nxt
        if P.HARD_CREDENTIAL_RE.search(decoded) or _contains_fixed_credential(decoded):
            return True
    else:
        if unquote_plus(decoded) != decoded:
            return True
    return _contains_fixed_credential(payload)


# Verdicts for URLs found clean, keyed on (domain, port, path+query, host exempt).
# Transcripts repeat their documentation links, and a clean verdict costs a credential
# scan. Only clean, short URLs are kept, so the cache never holds a suspicious URL
# (which could carry a secret). When it is full it is cleared, not evicted
# one entry at a time: simple, and the cost is a burst of re-checks.
_CLEAN_URLS: dict[tuple[str, str, str, bool], None] = {}
_CLEAN_URLS_MAX = 4096
_CLEAN_URL_MAX_LEN = 512


def _exfil_round(text: str) -> tuple[str, RedactionReport]:
    if "://" not in text:
        return text, {}
    spans: list[_Span] = []
    for m in P.URL_RE.finditer(text):
        domain, port, path_and_query = m.group(1), m.group(2) or "", m.group(3) or ""
        key = (domain, port, path_and_query, domain.lower() in P.EXEMPT_EXACT_HOSTS)
        if key in _CLEAN_URLS:
            continue
        if _url_is_suspicious(domain, port, path_and_query):
            spans.append((m.start(), m.end(), P.EXFIL_KIND, f"{P.EXFIL_TAG_PREFIX}{domain}]"))
        elif len(path_and_query) <= _CLEAN_URL_MAX_LEN:
            if len(_CLEAN_URLS) >= _CLEAN_URLS_MAX:
                _CLEAN_URLS.clear()
            _CLEAN_URLS[key] = None
    if not spans:
        return text, {}
    return _apply(text, spans)


# ── Rounds to a fixpoint ─────────────────────────────────────────────────────

_Round = Callable[[str, "_View | None"], tuple[str, RedactionReport]]


def _fixpoint(round_: _Round, text: str, view: _View | None = None) -> tuple[str, RedactionReport]:
    """Repeat ``round_`` until it replaces nothing. ``view`` (of ``text``) seeds round 1."""
    report: RedactionReport = {}
    for _ in range(_MAX_ROUNDS):
        text, found = round_(text, view)
        view = None
        if not found:  # nothing replaced: the text is a fixpoint
            break
        for kind, count in found.items():
            report[kind] = report.get(kind, 0) + count
    return text, report


def _credentials_only_round(text: str, view: _View | None) -> tuple[str, RedactionReport]:
    return _credentials_round(text, view)


def _exfil_only_round(text: str, view: _View | None) -> tuple[str, RedactionReport]:
    return _exfil_round(text)


def _write_boundary_round(text: str, view: _View | None) -> tuple[str, RedactionReport]:
    out, urls = _exfil_round(text)
    # An unchanged text keeps its view (the fast path already built its windows).
    out, creds = _credentials_round(out, view if out is text else None)
    return out, merge_reports(urls, creds)


def _summary_round(text: str, view: _View | None) -> tuple[str, RedactionReport]:
    out, creds = _credentials_round(text, view)
    out, urls = _exfil_round(out)
    return out, merge_reports(creds, urls)


def _redact(text: str, round_: _Round) -> tuple[str, RedactionReport]:
    view = _View(text)
    if not _might_contain_secret(view):
        return text, {}  # the fast path: plain prose never reaches a regex
    return _fixpoint(round_, text, view)


# ── Public API ───────────────────────────────────────────────────────────────


def merge_reports(*reports: RedactionReport) -> RedactionReport:
    """Sum the counts of several reports into a new one."""
    merged: RedactionReport = {}
    for report in reports:
        for kind, count in report.items():
            merged[kind] = merged.get(kind, 0) + count
    return merged


def redact_credentials(text: str) -> tuple[str, RedactionReport]:
    """Replace credentials (pattern table, base64-encoded, bare AWS secrets) with tags."""
    return _redact(text, _credentials_only_round)


def redact_exfiltration_urls(text: str) -> tuple[str, RedactionReport]:
    """Replace each suspicious URL with ``[REDACTED: suspicious URL to {host}]``."""
    if "://" not in text:
        return text, {}
    return _fixpoint(_exfil_only_round, text)


def redact_text(text: str) -> tuple[str, RedactionReport]:
    """Return ``text`` with secrets replaced and a value-free report {kind: count}.

    Write-boundary order (reference §1.5): exfiltration URLs, then credentials.
    Idempotent: ``redact_text(redact_text(x)[0])[0] == redact_text(x)[0]``.
    """
    return _redact(text, _write_boundary_round)


def _redact_summary_text(text: str) -> tuple[str, RedactionReport]:
    return _redact(text, _summary_round)


def _redact_tree(value: Any, redact: Callable[[str], tuple[str, RedactionReport]]) -> Any:
    reports: list[RedactionReport] = []

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            out, report = redact(node)
            if report:
                reports.append(report)
            return out
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, tuple):
            return tuple(walk(item) for item in node)
        return node

    return walk(value), merge_reports(*reports)


def redact_value(value: Any) -> tuple[Any, RedactionReport]:
    """Recursively redact every ``str`` inside dicts/lists; keys and non-strings untouched.

    Strings go through :func:`redact_text` (write-boundary order). Dicts, lists and
    tuples are rebuilt, never mutated. Non-string leaves, and strings that need no
    change, are returned as the same objects.
    """
    return _redact_tree(value, redact_text)


def redact_payload(value: Any) -> tuple[Any, RedactionReport]:
    """As :func:`redact_value`, in the summaries order: credentials, then URLs (§4.1)."""
    return _redact_tree(value, _redact_summary_text)
