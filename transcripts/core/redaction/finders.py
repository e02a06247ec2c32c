"""Pass 1: the credential pattern table, emulating the original's single alternation.

One finder per candidate rule (windowed, regex, or a linear finder for PEM, JWT and
URI schemes); :func:`credential_spans` merges their matches left to right.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from . import patterns as P
from .report import Span
from .structured import any_scheme_finder, assign_finder, cli_finder, cookie_finder
from .views import View, Windows

# A pass-1 finder: leftmost (start, end) at or after ``pos``, or None when exhausted.
_Finder = Callable[[int], tuple[int, int] | None]


def _windowed_finder(pattern: re.Pattern[str], win: Windows) -> _Finder:
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


def _pem_finder(
    text: str,
    header: re.Pattern[str] = P.PEM_HEADER_RE,
    end_re: re.Pattern[str] = P.PEM_END_RE,
    tail_re: re.Pattern[str] = P.PEM_TRUNCATED_TAIL_RE,
) -> _Finder:
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
        m = end_re.search(text, x)
        found = None if m is None else m.span()
        cache[:] = [(x, found)]
        return found

    def find(pos: int) -> tuple[int, int] | None:
        m = header.search(text, pos)
        if m is None:
            return None
        end = next_end(m.end())
        if end is not None:
            return m.start(), end[1]
        tail = tail_re.match(text, m.end())
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


def _validated(find: _Finder, text: str, validate: Callable[[str], bool]) -> _Finder:
    # A rejected match is skipped: search again one character after its start. The
    # validated rules have bounded matches or a literal prefix, so this stays linear.
    def find_valid(pos: int) -> tuple[int, int] | None:
        while (head := find(pos)) is not None:
            if validate(text[head[0] : head[1]]):
                return head
            pos = head[0] + 1
        return None

    return find_valid


def _finder(index: int, view: View) -> _Finder:
    rule = P.RULES[index]
    text = view.text
    if rule.finder == "pem":
        return _pem_finder(text)
    if rule.finder == "pgp":
        return _pem_finder(text, P.PGP_HEADER_RE, P.PGP_END_RE, P.PGP_TRUNCATED_TAIL_RE)
    if rule.finder == "jwt":
        return _jwt_finder(text)
    if rule.finder == "scheme":
        return _scheme_finder(index, text)
    if rule.finder == "assign":
        return assign_finder(index, view)
    if rule.finder == "cookie":
        return cookie_finder(text)
    if rule.finder == "anyscheme":
        return any_scheme_finder(text)
    if rule.finder == "cli":
        return cli_finder(view)
    # A windowed rule is a candidate only when a window holds its anchor, so the
    # windows exist here. Were they missing, a full-text scan would still be correct.
    if rule.windowed and view.windows is not None:
        find = _windowed_finder(rule.pattern, view.windows)
    else:
        find = _regex_finder(rule.pattern, text)
    return find if rule.validate is None else _validated(find, text, rule.validate)


def credential_spans(
    view: View, *, first_only: bool = False, among: Iterable[int] | None = None
) -> list[Span]:
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
    spans: list[Span] = []
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
