"""Credential and exfiltration-URL redaction (pure: standard library only, no Django).

A port of the original's ``redact_credentials`` and ``redact_exfiltration_urls``
(reference §4.3 and §4.4), with current provider token formats added. It runs at the
transcript write boundary on every non-user row and revision patch
(:func:`redact_text`, :func:`redact_value`), and in the summaries app on model-written
payloads (:func:`redact_payload`). What counts as a secret lives in
:mod:`transcripts.core.redaction_patterns`; this module finds and replaces it fast,
with a bounded worst case.

Design, in the order a call meets it:

* **Fast path.** :func:`_might_contain_secret` makes a handful of C-speed checks on a
  latin-1 view of the text (one byte per code point, so offsets match). It looks for
  the literals of ``FAST_PATH_ANCHORS`` (among them "://"), case-folded
  "authorization", and a run of 15+ token characters (a "window"). Plain prose fails
  every check and comes back unchanged, with no regex run.
* **Pass 1** (the pattern table) emulates the original's single alternation: the
  leftmost match wins, and on a tie the lower rule index wins. Only rules whose
  literal anchors occur are run, each separately, and :func:`_credential_spans` merges
  their matches in the order the alternation would. Windowed rules scan only the
  windows (:class:`_Windows`), which prose barely has.
* **Passes 2 and 3** (base64-encoded credentials; bare AWS secret keys) scan the
  original text's 40+ character runs. They skip anything an earlier pass already
  covers, as the original's ``result.replace`` did.
* **Exfiltration URLs.** Each URL gets the original's verdict. Its credential checks
  run only the rules whose anchors occur in the whole text; a URL is a substring, so
  no other rule can match in it. Clean verdicts are cached.
* **Fixpoint.** A replacement can change a neighbour's boundary: a tag ends in "]",
  which satisfies a look-behind the original character did not. So one round is not
  always idempotent, and every public entry point repeats its round until nothing
  matches. That is at most :data:`_MAX_ROUNDS` rounds; in practice two when something
  was found, one otherwise.

Worst case: no pattern backtracks catastrophically. The four places where the original
re-scans quadratically or worse (JWT, Telegram, PEM without END, the S3 presigned
regex) use linear finders that return the same matches. The pass-3 window slide is
incremental, so 1 MB inputs take well under a second (``bench/bench_redaction.py``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
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

_KEY_LEN = P.SECRET_KEY_LEN
_WINDOW_MAP = bytes(1 if chr(i) in P.WINDOW_CHARS else 0 for i in range(256))
_WINDOW_NEEDLE = b"\x01" * P.WINDOW_MIN_RUN
_WINDOW_BYTES = frozenset(P.WINDOW_CHARS.encode("ascii"))
_FAST_ANCHORS = tuple(a.encode("latin-1") for a in P.FAST_PATH_ANCHORS)
_FAST_LOWER_ANCHORS = tuple(a.encode("latin-1") for a in P.FAST_PATH_LOWER_ANCHORS)


def _windowed_anchor_index() -> dict[str, tuple[int, ...]]:
    by_anchor: dict[str, list[int]] = {}
    for i in P.WINDOWED_RULES:
        for anchor in P.RULES[i].anchors:
            by_anchor.setdefault(anchor, []).append(i)
    return {a: tuple(rules) for a, rules in by_anchor.items()}


# Distinct windowed-rule anchors -> rules. Each is tested once per text, on the windows.
_WINDOWED_ANCHORS = _windowed_anchor_index()
_WINDOWED_ANCHOR_LIST = tuple(_WINDOWED_ANCHORS)
# Windowed rules without anchors are candidates whenever there are windows.
_UNANCHORED_WINDOWED = tuple(i for i in P.WINDOWED_RULES if not P.RULES[i].anchors)


def _full_text_gate_plan(anchor: str, lower: bool) -> tuple[bytes, bytes | None, bool]:
    """(anchor bytes, fast-path anchor inside it or None, lies inside a window)."""
    raw = anchor.encode("latin-1")
    fast = next((f for f in (_FAST_LOWER_ANCHORS if lower else _FAST_ANCHORS) if f in raw), None)
    in_window = not lower and len(raw) >= P.WINDOW_MIN_RUN and _WINDOW_BYTES.issuperset(raw)
    return raw, fast, in_window


_FULL_TEXT_GATES = {
    i: tuple(_full_text_gate_plan(a, P.RULES[i].anchor_lower) for a in P.RULES[i].anchors)
    for i in P.FULL_TEXT_RULES
}
# Full-text anchors that contain no fast-path anchor, and so can only occur in a window.
# If no fast-path anchor occurs and none of these is in a window, no full-text rule can
# match (every full-text anchor is one or the other; a test checks this).
_WINDOW_ONLY_FULL_TEXT_ANCHORS = tuple(
    sorted(
        {raw.decode("ascii") for gates in _FULL_TEXT_GATES.values() for raw, fast, w in gates if w}
    )
)


# ── Text views ───────────────────────────────────────────────────────────────


class _Windows:
    """The maximal runs of window characters (≥ WINDOW_MIN_RUN), joined by newlines.

    A windowed rule's match always lies inside one run. Scanning ``joined`` finds the
    same matches as scanning the text, at the cost of the runs only.
    """

    __slots__ = ("joined", "jstarts", "long", "oends", "ostarts")

    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        self.ostarts = [s for s, _ in spans]
        self.oends = [e for _, e in spans]
        self.jstarts: list[int] = []
        offset = 0
        for s, e in spans:
            self.jstarts.append(offset)
            offset += e - s + 1
        self.joined = "\n".join(text[s:e] for s, e in spans)
        # Windows long enough for passes 2 and 3 (a 40+ base64 run).
        self.long = [k for k, (s, e) in enumerate(spans) if e - s >= _KEY_LEN]

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

    def long_matches(self, pattern: re.Pattern[str]) -> list[tuple[int, int, str]]:
        """(text start, text end, text) of ``pattern`` matches in the 40+ windows.

        Each window is scanned with pos/endpos. Look-arounds at its edges see the
        joining newline or the string end, and both fail every class a window
        character satisfies, exactly as the real neighbour does.
        """
        out = []
        for k in self.long:
            jstart, ostart = self.jstarts[k], self.ostarts[k]
            for m in pattern.finditer(self.joined, jstart, jstart + self.oends[k] - ostart):
                s = ostart + m.start() - jstart
                out.append((s, s + m.end() - m.start(), m.group()))
        return out


class _View:
    """One text, its latin-1 bytes, its windows, and memoised anchor look-ups."""

    __slots__ = ("_candidates", "_lower", "_present", "raw", "text", "windows")

    def __init__(self, text: str) -> None:
        self.text = text
        # One byte per code point, so byte offsets are text offsets. Anything outside
        # latin-1 becomes "?", which no anchor contains and no window class admits.
        self.raw = raw = text.encode("latin-1", "replace")
        self._lower: bytes | None = None
        self._present: dict[bytes, bool] = {}
        self._candidates: tuple[int, ...] | None = None
        mapped = raw.translate(_WINDOW_MAP)
        spans: list[tuple[int, int]] = []
        pos = mapped.find(_WINDOW_NEEDLE)
        while pos >= 0:
            end = mapped.find(b"\x00", pos + P.WINDOW_MIN_RUN)
            if end < 0:
                end = len(mapped)
            spans.append((pos, end))
            pos = mapped.find(_WINDOW_NEEDLE, end)
        self.windows = _Windows(text, spans) if spans else None

    def has(self, anchor: bytes) -> bool:
        found = self._present.get(anchor)
        if found is None:
            found = self._present[anchor] = anchor in self.raw
        return found

    def has_lower(self, anchor: bytes) -> bool:
        if self._lower is None:
            self._lower = self.raw.lower()  # ASCII-only folding, like the bearer rule
        return anchor in self._lower

    def candidates(self, among: Iterable[int] | None = None) -> tuple[int, ...]:
        """Indices of the rules whose anchors occur, in rule order (memoised for all rules).

        ``among`` limits the answer to those rules. That is exact for a substring of a
        text whose candidates are ``among``: an anchor absent from the text is absent
        from the substring.
        """
        joined = None if self.windows is None else self.windows.joined
        if among is not None:  # usually a handful of rules: test just those
            return tuple(
                i
                for i in among
                if (
                    joined is not None
                    and (not P.RULES[i].anchors or any(a in joined for a in P.RULES[i].anchors))
                    if P.RULES[i].windowed
                    else self._gate(_FULL_TEXT_GATES[i], P.RULES[i].anchor_lower)
                )
            )
        if self._candidates is None:
            found: set[int] = set()
            if joined is not None:
                found.update(_UNANCHORED_WINDOWED)
                # One substring test per distinct anchor. An alternation of all of them
                # is slower when nothing matches, the common case: it tries every branch
                # at every position.
                for anchor in [a for a in _WINDOWED_ANCHOR_LIST if a in joined]:
                    found.update(_WINDOWED_ANCHORS[anchor])
            if (
                any(self.has(f) for f in _FAST_ANCHORS)
                or any(self.has_lower(f) for f in _FAST_LOWER_ANCHORS)
                or (joined is not None and any(a in joined for a in _WINDOW_ONLY_FULL_TEXT_ANCHORS))
            ):
                for i, gates in _FULL_TEXT_GATES.items():
                    if self._gate(gates, P.RULES[i].anchor_lower):
                        found.add(i)
            self._candidates = tuple(sorted(found))
        return self._candidates

    def _gate(self, gates: tuple[tuple[bytes, bytes | None, bool], ...], lower: bool) -> bool:
        for raw, fast, in_window in gates:
            # A fast-path anchor inside this one, already known absent, settles it. A
            # window-only anchor is searched in the (much shorter) joined windows.
            if fast is not None and not (self.has_lower(fast) if lower else self.has(fast)):
                continue
            if in_window:
                if self.windows is not None and raw.decode("ascii") in self.windows.joined:
                    return True
            elif self.has_lower(raw) if lower else self.has(raw):
                return True
        return False


def _might_contain_secret(view: _View) -> bool:
    """A sound necessary condition for any redaction (credential or exfil URL).

    Every rule's match contains a fast-path anchor or a window run (tests check this
    rule by rule), every exfil URL contains "://", and passes 2 and 3 need a 40-char
    run, which is a window.
    """
    return (
        view.windows is not None
        or any(view.has(a) for a in _FAST_ANCHORS)
        or any(view.has_lower(a) for a in _FAST_LOWER_ANCHORS)
    )


# ── Pass 1 finders ───────────────────────────────────────────────────────────


def _windowed_finder(pattern: re.Pattern[str], win: _Windows) -> _Finder:
    joined = win.joined

    def find(pos: int) -> tuple[int, int] | None:
        m = pattern.search(joined, win.to_joined(pos))
        if m is None:
            return None
        start = win.to_orig(m.start())
        return start, start + m.end() - m.start()

    return find


def _regex_finder(pattern: re.Pattern[str], text: str) -> _Finder:
    def find(pos: int) -> tuple[int, int] | None:
        m = pattern.search(text, pos)
        return None if m is None else m.span()

    return find


def _pem_finder(text: str) -> _Finder:
    # The lazy body ``[\s\S]*?-----END…`` reaches the first END marker after the
    # header. With many headers and no END, each attempt would scan to the end of the
    # text (quadratic). The next END at or after x is the same for every x up to that
    # END's start, so one cached search serves every header before it.
    cache: list[tuple[int, tuple[int, int] | None]] = []

    def next_end(x: int) -> tuple[int, int] | None:
        if cache:
            searched_from, found = cache[0]
            if searched_from <= x and (found is None or x <= found[0]):
                return found
        m = P.PEM_END_RE.search(text, x)
        found = None if m is None else m.span()
        cache[:] = [(x, found)]
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
    # contain a dot, so it always ends where the token-character run ends, and success
    # depends only on what follows that run. If the first "eyJ" of a run fails, every
    # later "eyJ" in the run fails too, so skip to the run end. This keeps the scan
    # linear on "eyJeyJeyJ…"; the literal pattern is quadratic there.
    def find(pos: int) -> tuple[int, int] | None:
        while (head := P.JWT_HEAD_RE.search(text, pos)) is not None:
            if head.end() > head.start() + 3:
                tail = P.JWT_TAIL_RE.match(text, head.end())
                if tail is not None:
                    return head.start(), tail.end()
            pos = head.end()
        return None

    return find


def _scheme_search_re(rule: P.Rule) -> re.Pattern[str]:
    # "://" as a literal prefix (a C-speed skip), fixed-width look-behinds for the
    # accepted schemes, then the shared tail. It matches exactly where the rule's
    # pattern does, but starts at the "://" instead of at the scheme.
    behind = "|".join(f"(?<={re.escape(s)}://)" for s in rule.schemes)
    return re.compile(f"://(?:{behind}){P.USERINFO_TAIL}")


_SCHEME_SEARCH = {i: _scheme_search_re(P.RULES[i]) for i in P.FULL_TEXT_RULES if P.RULES[i].schemes}
_SCHEMES_LONGEST_FIRST = {
    i: sorted(P.RULES[i].schemes, key=len, reverse=True) for i in _SCHEME_SEARCH
}


def _scheme_finder(index: int, text: str) -> _Finder:
    # The scheme is unanchored on the left, so a match starts at the longest accepted
    # scheme that ends at "://" (the leftmost start), which must be at or after ``pos``.
    # The tail after "://" is the same for every scheme, so the end is too.
    search, schemes = _SCHEME_SEARCH[index], _SCHEMES_LONGEST_FIRST[index]

    def find(pos: int) -> tuple[int, int] | None:
        at = pos
        while (m := search.search(text, at)) is not None:
            i = m.start()
            for scheme in schemes:
                start = i - len(scheme)
                if start >= pos and text.startswith(scheme, start):
                    return start, m.end()
            at = i + 1
        return None

    return find


def _finder(index: int, view: _View) -> _Finder:
    rule = P.RULES[index]
    if rule.windowed and view.windows is not None:
        return _windowed_finder(rule.pattern, view.windows)
    if rule.finder == "pem":
        return _pem_finder(view.text)
    if rule.finder == "jwt":
        return _jwt_finder(view.text)
    if rule.finder == "scheme":
        return _scheme_finder(index, view.text)
    # A windowed rule is a candidate only when a window holds its anchor, so the
    # windows exist here. Were they missing, a full-text scan would still be correct.
    return _regex_finder(rule.pattern, view.text)


def _credential_spans(
    view: _View, *, first_only: bool = False, among: Iterable[int] | None = None
) -> list[_Span]:
    """Pass 1: the matches the original's single alternation would make, left to right.

    Each candidate rule keeps its next match (its "head"). The winner has the smallest
    start, and on a tie the lowest rule index (alternation order). Then every head that
    starts before the winner's end is searched again from that end, which is where the
    alternation resumes.
    """
    heads: list[tuple[int, int, int, _Finder]] = []  # start, rule index, end, finder
    for index in view.candidates(among):
        finder = _finder(index, view)
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


# ── Passes 2 and 3 ───────────────────────────────────────────────────────────


def _decodes_to_credential(chunk: str) -> bool:
    """Pass 2: ``chunk`` strictly base64-decodes to text that pass 1 matches."""
    try:
        raw = base64.b64decode(chunk, validate=True)
    except (binascii.Error, ValueError):
        return False
    view = _View(raw.decode("utf-8", errors="ignore"))
    return _might_contain_secret(view) and bool(_credential_spans(view, first_only=True))


def _contains_fixed_credential(view: _View, among: Iterable[int] | None = None) -> bool:
    """Pass 1 or pass 2 would fire. Not pass 3, whose entropy guess is too loose for URLs."""
    if not _might_contain_secret(view):
        return False
    if _credential_spans(view, first_only=True, among=among):
        return True
    win = view.windows
    return win is not None and any(
        _decodes_to_credential(chunk) for _, _, chunk in win.long_matches(P.B64_CHUNK_RE)
    )


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


def _contains_bare_secret(run: str) -> bool:
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
    if win is not None and win.long:
        # Passes 2 and 3 scan the original text, like the original, and skip a chunk
        # an earlier pass already replaced (the original's ``result.replace`` no longer
        # found it).
        taken = _Taken(spans)
        for start, end, chunk in win.long_matches(P.B64_CHUNK_RE):
            if not taken.overlaps(start, end) and _decodes_to_credential(chunk):
                spans.append((start, end, P.ENCODED_KIND, P.ENCODED_CREDENTIAL_TAG))
                taken.add(start, end)
        for start, end, run in win.long_matches(P.BARE_SECRET_RUN_RE):
            if not taken.overlaps(start, end) and _contains_bare_secret(run):
                spans.append((start, end, P.BARE_AWS_KIND, P.CREDENTIAL_TAG))
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


def _url_is_suspicious(
    domain: str, port: str, path_and_query: str, text_rules: tuple[int, ...]
) -> bool:
    """The original's per-URL verdict (reference §4.4).

    Apart from the presigned exemption, the checks are a plain OR, so the cheap ones
    run first. ``text_rules`` (the candidate rules of the text the URL sits in) limits
    the credential scan of the raw payload, which is a substring of that text. Decoded
    forms are new text and get every rule.
    """
    qmark = path_and_query.find("?")
    query = path_and_query[qmark + 1 :] if qmark != -1 else ""
    if query and _is_safe_presigned(domain, query):
        return False
    if P.EXFIL_PERCENT_RE.search(path_and_query):  # 21+ consecutive %XX octets
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
    # Decode until stable, up to 3 rounds: a double-encoded payload survives one
    # round. A payload still decodable after the budget was never seen in plaintext,
    # so it is flagged.
    decoded = payload
    for _ in range(P.MAX_URL_DECODE_PASSES):
        nxt = unquote_plus(decoded)
        if nxt == decoded:
            break
        decoded = nxt
        if P.HARD_CREDENTIAL_RE.search(decoded) or _contains_fixed_credential(_View(decoded)):
            return True
    else:
        if unquote_plus(decoded) != decoded:
            return True
    if not text_rules:  # pass 1 cannot fire in a substring of this text: only pass 2 can
        return any(_decodes_to_credential(m.group()) for m in P.B64_CHUNK_RE.finditer(payload))
    return _contains_fixed_credential(_View(payload), among=text_rules)


# Clean verdicts, keyed on (domain, port, path+query, host exempt). Transcripts repeat
# their links, and a verdict costs a credential scan. Only clean, short URLs are kept,
# so the cache never holds a URL that carries a secret. A full cache is cleared
# rather than evicted entry by entry: simpler, at the cost of a burst of re-checks.
_CLEAN_URLS: dict[tuple[str, str, str, bool], None] = {}
_CLEAN_URLS_MAX = 4096
_CLEAN_URL_MAX_LEN = 512


def _exfil_round(text: str, view: _View | None = None) -> tuple[str, RedactionReport]:
    if "://" not in text:
        return text, {}
    spans: list[_Span] = []
    text_rules: tuple[int, ...] | None = None
    for m in P.URL_RE.finditer(text):
        domain, port, path_and_query = m.group(1), m.group(2) or "", m.group(3) or ""
        key = (domain, port, path_and_query, domain.lower() in P.EXEMPT_EXACT_HOSTS)
        if key in _CLEAN_URLS:
            continue
        if text_rules is None:
            text_rules = (view or _View(text)).candidates()
        if _url_is_suspicious(domain, port, path_and_query, text_rules):
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


def _write_boundary_round(text: str, view: _View | None) -> tuple[str, RedactionReport]:
    out, urls = _exfil_round(text, view)
    # An unchanged text keeps its view (and its windows and candidates).
    out, creds = _credentials_round(out, view if out is text else None)
    return out, merge_reports(urls, creds) if urls else creds


def _summary_round(text: str, view: _View | None) -> tuple[str, RedactionReport]:
    out, creds = _credentials_round(text, view)
    out, urls = _exfil_round(out, view if out is text else None)
    return out, merge_reports(creds, urls) if urls else creds


def _redact(text: str, round_: _Round) -> tuple[str, RedactionReport]:
    first = _View(text)
    if not _might_contain_secret(first):
        return text, {}  # the fast path: plain prose never reaches a regex
    view: _View | None = first
    report: RedactionReport = {}
    for _ in range(_MAX_ROUNDS):
        text, found = round_(text, view)
        view = None
        if not found:  # nothing replaced: the text is a fixpoint
            break
        for kind, count in found.items():
            report[kind] = report.get(kind, 0) + count
    return text, report


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
    return _redact(text, _credentials_round)


def redact_exfiltration_urls(text: str) -> tuple[str, RedactionReport]:
    """Replace each suspicious URL with ``[REDACTED: suspicious URL to {host}]``."""
    if "://" not in text:
        return text, {}
    return _redact(text, _exfil_round)


def redact_text(text: str) -> tuple[str, RedactionReport]:
    """Return ``text`` with secrets replaced and a value-free report {kind: count}.

    Write-boundary order (reference §1.5): exfiltration URLs, then credentials.
    Idempotent: ``redact_text(redact_text(x)[0])[0] == redact_text(x)[0]``.
    """
    return _redact(text, _write_boundary_round)


def _redact_summary_text(text: str) -> tuple[str, RedactionReport]:
    return _redact(text, _summary_round)


def _redact_tree(
    value: Any, redact: Callable[[str], tuple[str, RedactionReport]]
) -> tuple[Any, RedactionReport]:
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
