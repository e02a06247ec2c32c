"""One text as the engine sees it: latin-1 bytes, windows and anchor look-ups.

:func:`might_contain_secret` is the fast path: a handful of C-speed checks that plain
prose fails, so it never reaches a regex.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

from . import patterns as P
from . import prefilter

_KEY_LEN = P.SECRET_KEY_LEN
_WINDOW_BYTES = frozenset(P.WINDOW_CHARS.encode("ascii"))
_FAST_ANCHORS = tuple(a.encode("latin-1") for a in P.FAST_PATH_ANCHORS)
_FAST_LOWER_ANCHORS = tuple(a.encode("latin-1") for a in P.FAST_PATH_LOWER_ANCHORS)


# Distinct windowed-rule anchors -> rules. Each is tested once per text, on the windows.
_WINDOWED_ANCHORS = {
    a: tuple(i for i in P.WINDOWED_RULES if a in P.RULES[i].anchors)
    for i in P.WINDOWED_RULES
    for a in P.RULES[i].anchors
}
# The anchors grouped by their lowercase form ("ghp_" and its capitalised twin "Ghp_"):
# one test on the lowercased windows rules out the whole group. Windows are ASCII, so
# lowercasing keeps their offsets.
_WINDOWED_ANCHOR_GROUPS = tuple(
    (low, tuple(a for a in _WINDOWED_ANCHORS if a.lower() == low))
    for low in dict.fromkeys(a.lower() for a in _WINDOWED_ANCHORS)
)
# Windowed rules without anchors are candidates whenever there are windows (and their
# gate, if any, finds something in them).
_UNANCHORED_WINDOWED = tuple(i for i in P.WINDOWED_RULES if not P.RULES[i].anchors)


_Trie = dict[str, "_Trie"]


def _trie_pattern(words: Iterable[str]) -> str:
    """One regex matching any of ``words``, factored by common prefixes.

    A flat alternation of 130 literals tries every branch at every position; the trie
    tries one branch per distinct next character, so it beats 130 ``in`` tests.
    """
    root: _Trie = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if "" in node:
            alts.append("")
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root)


# Any windowed anchor group, on the lowercased windows. Realistic windows (hashes,
# identifiers, paths) hold none, so one C-speed search usually settles them all; when
# it finds one, the per-group tests below name the groups.
_ANY_WINDOWED_ANCHOR = re.compile(_trie_pattern(low for low, _ in _WINDOWED_ANCHOR_GROUPS))


def _gate_open(index: int, joined: str) -> bool:
    gate = P.RULES[index].gate
    return gate is None or gate.search(joined) is not None


def _full_text_gate_plan(anchor: str, lower: bool) -> tuple[bytes, bytes | None, str | None]:
    """(anchor bytes, fast-path anchor inside it or None, the anchor if it lies in a window)."""
    raw = anchor.encode("latin-1")
    fast = next((f for f in (_FAST_LOWER_ANCHORS if lower else _FAST_ANCHORS) if f in raw), None)
    in_window = not lower and len(raw) >= P.WINDOW_MIN_RUN and _WINDOW_BYTES.issuperset(raw)
    return raw, fast, anchor if in_window else None


_FULL_TEXT_GATES = {
    i: tuple(_full_text_gate_plan(a, P.RULES[i].anchor_lower) for a in P.RULES[i].anchors)
    for i in P.FULL_TEXT_RULES
}


def _full_text_rules_by_gate() -> tuple[
    tuple[tuple[bytes, bool, tuple[int, ...]], ...], tuple[tuple[str, tuple[int, ...]], ...]
]:
    by_fast: dict[tuple[bytes, bool], list[int]] = {}
    by_window: dict[str, list[int]] = {}
    for i, gates in _FULL_TEXT_GATES.items():
        lower = P.RULES[i].anchor_lower
        for _, fast, window in gates:
            if fast is not None:
                by_fast.setdefault((fast, lower), []).append(i)
            if window is not None:
                by_window.setdefault(window, []).append(i)
    return (
        tuple((f, lower, tuple(rules)) for (f, lower), rules in by_fast.items()),
        tuple((w, tuple(rules)) for w, rules in by_window.items()),
    )


# The full-text rules each fast-path anchor (or window-only anchor) can open. Only those
# are gated: a text with "key" in it gates the key = value rule, not all of them.
_FULL_TEXT_BY_FAST, _FULL_TEXT_BY_WINDOW = _full_text_rules_by_gate()


# ── Text views ───────────────────────────────────────────────────────────────


class Windows:
    """The maximal runs of window characters (≥ WINDOW_MIN_RUN), joined by newlines.

    A windowed rule's match always lies inside one run. Scanning ``joined`` finds the
    same matches as scanning the text, at the cost of the runs only.
    """

    __slots__ = ("joined", "jstarts", "long", "oends", "ostarts")

    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        self.ostarts = [s for s, _ in spans]
        self.oends = [e for _, e in spans]
        self.jstarts = list(accumulate((e - s + 1 for s, e in spans), initial=0))[:-1]
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


class View:
    """One text, its latin-1 bytes, its windows, and memoised anchor look-ups."""

    __slots__ = (
        "_candidates",
        "_lower",
        "_maybe",
        "_present",
        "_present_lower",
        "raw",
        "text",
        "windows",
    )

    def __init__(self, text: str, found: prefilter.Found | None = None) -> None:
        self.text = text
        # One byte per code point, so byte offsets are text offsets. Anything outside
        # latin-1 becomes "?", which no anchor contains and no window class admits.
        self.raw = raw = text.encode("latin-1", "replace")
        self._lower: bytes | None = None
        self._present: dict[bytes, bool] = {}
        self._present_lower: dict[bytes, bool] = {}
        self._candidates: tuple[int, ...] | None = None
        self.windows: Windows | None = None
        # The fast path's answer, once known (a prefilter scan found a trigger: True).
        self._maybe: bool | None = bool(found) if found is not None else None
        if found is not None:
            # A prefilter scan of this text already knows every fast-path answer.
            self._present = {a: i in found for i, a in enumerate(prefilter.EXACT)}
            base = len(prefilter.EXACT)
            self._present_lower = {a: base + i in found for i, a in enumerate(prefilter.CASELESS)}
            if prefilter.WINDOW_ID not in found:
                return
        mapped = raw.translate(prefilter.WINDOW_MAP)
        spans: list[tuple[int, int]] = []
        pos = mapped.find(prefilter.WINDOW_NEEDLE)
        while pos >= 0:
            end = mapped.find(b"\x00", pos + P.WINDOW_MIN_RUN)
            if end < 0:
                end = len(mapped)
            spans.append((pos, end))
            pos = mapped.find(prefilter.WINDOW_NEEDLE, end)
        self.windows = Windows(text, spans) if spans else None

    def has(self, anchor: bytes) -> bool:
        found = self._present.get(anchor)
        if found is None:
            found = self._present[anchor] = anchor in self.raw
        return found

    def lowered(self) -> str:
        """The text lowercased in ASCII only, with the same offsets (non-latin-1 is "?")."""
        if self._lower is None:
            self._lower = self.raw.lower()
        return self._lower.decode("latin-1")

    def has_lower(self, anchor: bytes) -> bool:
        # Memoised like ``has``: the fast path, the gate table and each rule's gate ask
        # for the same few keywords, and each test is a scan of the whole text.
        found = self._present_lower.get(anchor)
        if found is None:
            if self._lower is None:
                self._lower = self.raw.lower()  # ASCII-only folding, like the bearer rule
            found = self._present_lower[anchor] = anchor in self._lower
        return found

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
                    and (
                        any(a in joined for a in P.RULES[i].anchors)
                        if P.RULES[i].anchors
                        else _gate_open(i, joined)
                    )
                    if P.RULES[i].windowed
                    else self._gate(_FULL_TEXT_GATES[i], P.RULES[i].anchor_lower)
                )
            )
        if self._candidates is None:
            found: set[int] = set()
            if joined is not None:
                found.update(i for i in _UNANCHORED_WINDOWED if _gate_open(i, joined))
                low = joined.lower()
                if _ANY_WINDOWED_ANCHOR.search(low) is not None:
                    for group_key, exact in _WINDOWED_ANCHOR_GROUPS:
                        if group_key in low:
                            for anchor in exact:
                                if anchor in joined:
                                    found.update(_WINDOWED_ANCHORS[anchor])
            opened: set[int] = set()
            for fast, lower, rules in _FULL_TEXT_BY_FAST:
                if self.has_lower(fast) if lower else self.has(fast):
                    opened.update(rules)
            if joined is not None:
                for window, rules in _FULL_TEXT_BY_WINDOW:
                    if window in joined:
                        opened.update(rules)
            for i in opened:
                if self._gate(_FULL_TEXT_GATES[i], P.RULES[i].anchor_lower):
                    found.add(i)
            self._candidates = tuple(sorted(found))
        return self._candidates

    def _gate(self, gates: tuple[tuple[bytes, bytes | None, str | None], ...], lower: bool) -> bool:
        for raw, fast, in_window in gates:
            # A fast-path anchor inside this one, already known absent, settles it. A
            # window-only anchor is searched in the (much shorter) joined windows.
            if fast is not None and not (self.has_lower(fast) if lower else self.has(fast)):
                continue
            if in_window is not None:
                if self.windows is not None and in_window in self.windows.joined:
                    return True
            elif self.has_lower(raw) if lower else self.has(raw):
                return True
        return False


def might_contain_secret(view: View) -> bool:
    """A sound necessary condition for any redaction (credential or exfil URL).

    Every rule's match contains a fast-path anchor or a window run (tests check this
    rule by rule), every exfil URL contains "://", and passes 2 and 3 need a 40-char
    run, which is a window.
    """
    if view._maybe is None:  # each round asks again: answer once per view
        view._maybe = (
            view.windows is not None
            or any(view.has(a) for a in _FAST_ANCHORS)
            or any(view.has_lower(a) for a in _FAST_LOWER_ANCHORS)
        )
    return view._maybe
