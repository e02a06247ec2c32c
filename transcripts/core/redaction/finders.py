"""Pass 1: the credential pattern table, emulating the original's single alternation.

One finder per candidate rule: ``find(pos)`` returns the rule's leftmost (start, end) at
or after ``pos``, or None. :func:`credential_spans` merges their matches left to right.
Every finder is linear over a text, the structured ones (:mod:`.patterns.assignments`)
included:

* assignments: each key match is followed by one value scan. A quoted value stops at
  its quote and an unquoted one at "=", and a key needs "=" or ":" (with a quote or a
  blank after ":") right after it, so a value never contains another key's separator.
* cookies: a rejected header list is skipped whole; its rejection holds for every
  suffix, so no header that starts inside it can be accepted.
* URI userinfo: the scheme walk-back stops at "://"'s own "/" and ":", which no scheme
  contains, so walks of different URIs never overlap.
* command lines: the text is cut into commands once and each command's words are read
  once.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable

from . import patterns as P
from .patterns import assignments as A
from .report import Span
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


# A key may start up to this far before ``pos`` while its value starts after it (an
# earlier span ended inside the key).
_KEY_LOOKBACK = 32


def _value_span(
    text: str, vs: int, after_colon: bool, passphrase: bool = False
) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value at ``vs``, or None when there is no literal.

    ``passphrase``: a quoted value may hold a few blank-separated words (a password's).
    """
    c = text[vs : vs + 1]
    if c == "\\" and text[vs + 1 : vs + 2] in ('"', "'"):  # an escaped quote in JSON
        vs, c = vs + 1, text[vs + 1]
    if c in A.QUOTED_VALUE_RE:
        start = vs + 1
        end = A.QUOTED_VALUE_RE[c].match(text, start).end()  # type: ignore[union-attr]
        closing = text[end : end + 1]
        if closing == c or (closing == "\\" and text[end + 1 : end + 2] == c):
            return start, end, True
        if passphrase and closing in (" ", "\t"):
            end = A.QUOTED_PASSPHRASE_RE[c].match(text, start).end()  # type: ignore[union-attr]
            closing = text[end : end + 1]
            words = text[start:end].split()
            if closing == c and len(words) <= A.PASSPHRASE_MAX_WORDS and words:
                return start, end, True
        return None
    if after_colon:  # "key:value" is a label, a time or a type; YAML needs ": "
        return None
    m = A.UNQUOTED_VALUE_RE.match(text, vs)
    if m is None or m.end() == vs:
        return None
    end = m.end()
    nxt = text[end : end + 1]
    value = m.group()
    if value.lower() in A.STRING_PREFIXES and nxt in ('"', "'"):
        inner = _value_span(text, end, False)
        return inner if inner is not None and inner[2] else None
    if nxt in ("(", "["):  # a call or a subscript: getpass(), os.environ["X"]
        return None
    while end > vs + 1 and text[end - 1] == ".":  # the full stop of a sentence
        end -= 1
    return vs, end, False


def _assign_keys(kind: str, lowered: str) -> list[tuple[int, bool]]:
    """(value position, key ends with a bare ":") of every key of ``kind``, in order.

    ``lowered`` is the text lowercased in ASCII only, with the same offsets.
    """
    found: dict[int, bool] = {}
    for key_re, owners in A.ASSIGN_KEY_RES[kind]:
        for m in key_re.finditer(lowered):
            if owners is not None and not lowered.endswith(owners, 0, m.start()):
                continue
            matched = m.group()
            found[m.end()] = matched.endswith(":")  # no blank after the colon
    return sorted(found.items())


def assign_finder(index: int, view: View) -> _Finder:
    kind = P.RULES[index].kind
    text, min_len = view.text, A.ASSIGN_MIN_LEN[kind]
    passphrase = kind == "password_assignment"
    keys: list[tuple[int, bool]] | None = None

    def find(pos: int) -> tuple[int, int] | None:
        nonlocal keys
        if keys is None:
            keys = _assign_keys(kind, view.lowered())
        # A key that ends a little before ``pos`` may still have its value after it.
        for k in range(bisect_left(keys, (pos - _KEY_LOOKBACK, False)), len(keys)):
            at, after_colon = keys[k]
            span = _value_span(text, at, after_colon, passphrase)
            if span is None or span[0] < pos:
                continue
            start, end, quoted = span
            if A.plausible_secret_value(text[start:end], quoted=quoted, min_len=min_len):
                return start, end
        return None

    return find


def cookie_finder(text: str) -> _Finder:
    def find(pos: int) -> tuple[int, int] | None:
        at = pos
        while (m := A.COOKIE_KEY_RE.search(text, at)) is not None:
            start = m.end()
            # Set-Cookie: only the first pair is the secret.
            pairs = A.SET_COOKIE_PAIR_RE if m.group()[:4].lower() == "set-" else A.COOKIE_LIST_RE
            found = pairs.match(text, start)
            if found is None:
                at = start
                continue
            end = found.end()
            if A.looks_like_session_cookie(text[start:end]):
                return start, end
            at = end
        return None

    return find


def any_scheme_finder(text: str) -> _Finder:
    def find(pos: int) -> tuple[int, int] | None:
        at = pos
        while (m := A.ANY_SCHEME_TAIL_RE.search(text, at)) is not None:
            i = m.start()
            run = i
            while run > 0 and text[run - 1] in A.SCHEME_CHARS:
                run -= 1
            start = next((k for k in range(max(run, pos), i) if text[k].isalpha()), -1)
            userinfo = text[i + 3 : m.end() - 1]
            password = userinfo.split(":", 1)[1]
            if start >= 0 and text[start].isascii() and A.plausible_userinfo_password(password):
                return start, m.end()
            at = i + 1
        return None

    return find


def _cli_value(
    text: str, word: tuple[int, int], cut: int = 0, userinfo: bool = False
) -> tuple[int, int] | None:
    """The password span of ``word`` from offset ``cut`` (quotes stripped), if it is one."""
    start, end = word[0] + cut, word[1]
    while start < end and text[start] in A.CLI_QUOTES:
        start += 1
    while end > start and text[end - 1] in A.CLI_QUOTES:
        end -= 1
    if userinfo:  # curl -u user:pass
        colon = text.find(":", start, end)
        if colon < 0:
            return None
        start = colon + 1
    value = text[start:end]
    if not value or not A.plausible_secret_value(value, quoted=True, min_len=4):
        return None
    return start, end


def _cli_command_spans(text: str, lowered: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Password spans in the command ``text[lo:hi]`` (one command: no newline or operator)."""
    words = [m.span() for m in A.CLI_WORD_RE.finditer(text, lo, hi)]
    names = [lowered[s:e].strip(A.CLI_QUOTES).rsplit("/", 1)[-1] for s, e in words]
    program = next((n for n in names if n in A.CLI_ATTACHED or n in A.CLI_SEPARATE), None)
    spans: list[tuple[int, int]] = []
    if program in A.CLI_LOGIN_ONLY and "login" not in names:
        program = None  # docker run -p 8080:80 is a port
    attached = A.CLI_ATTACHED.get(program or "", ())
    separate = A.CLI_SEPARATE.get(program or "", ())
    userinfo = program in A.CLI_USERINFO
    for i, name in enumerate(names):
        nxt = words[i + 1] if i + 1 < len(words) else None
        found: tuple[int, int] | None = None
        if name in A.CLI_LONG_FLAGS and nxt is not None:
            found = _cli_value(text, nxt)
        elif name.startswith(tuple(f + "=" for f in A.CLI_LONG_FLAGS)):
            found = _cli_value(text, words[i], lowered.index("=", *words[i]) + 1 - words[i][0])
        elif name in separate and nxt is not None:
            found = _cli_value(text, nxt, userinfo=userinfo)
        elif len(name) > 2 and name.startswith(attached) and not name.startswith("--"):
            flag_at = lowered.index(name[:2], *words[i]) - words[i][0]
            found = _cli_value(text, words[i], flag_at + 2, userinfo=userinfo)
        if found is not None:
            spans.append(found)
    return spans


def cli_finder(view: View) -> _Finder:
    """Passwords on a command line (see :data:`.patterns.assignments.CLI_ATTACHED`).

    Linear: the text is cut into commands once and each command's words are read once.
    """
    text = view.text
    spans: list[tuple[int, int]] | None = None

    def commands(lowered: str) -> list[tuple[int, int]]:
        """The bounds of each command that holds a trigger, once each, in order."""
        found: list[tuple[int, int]] = []
        for m in A.CLI_TRIGGER_RE.finditer(lowered):
            if found and m.start() < found[-1][1]:
                continue  # a later trigger of the same command
            before = lowered[m.start() - 1 : m.start()]
            if before.isalnum() or before in ("_", "-"):
                continue  # inside a longer name ("mymysql", "x-curl")
            lo = max(lowered.rfind(c, 0, m.start()) for c in A.CLI_COMMAND_END) + 1
            ends = [e for c in A.CLI_COMMAND_END if (e := lowered.find(c, m.end())) >= 0]
            found.append((lo, min(ends, default=len(lowered))))
        return found

    def find(pos: int) -> tuple[int, int] | None:
        nonlocal spans
        if spans is None:
            lowered = view.lowered()
            spans = [
                span
                for lo, hi in commands(lowered)
                for span in _cli_command_spans(text, lowered, lo, hi)
            ]
        k = bisect_left(spans, (pos, -1))
        return spans[k] if k < len(spans) else None

    return find


# The linear finders by ``Rule.finder``, each built from (rule index, view).
_LINEAR: dict[str, Callable[[int, View], _Finder]] = {
    "pem": lambda _, view: _pem_finder(view.text),
    "pgp": lambda _, view: _pem_finder(
        view.text, P.PGP_HEADER_RE, P.PGP_END_RE, P.PGP_TRUNCATED_TAIL_RE
    ),
    "jwt": lambda _, view: _jwt_finder(view.text),
    "scheme": lambda index, view: _scheme_finder(index, view.text),
    "assign": assign_finder,
    "cookie": lambda _, view: cookie_finder(view.text),
    "anyscheme": lambda _, view: any_scheme_finder(view.text),
    "cli": lambda _, view: cli_finder(view),
}


def _finder(index: int, view: View) -> _Finder:
    rule = P.RULES[index]
    if rule.finder != "regex":
        return _LINEAR[rule.finder](index, view)
    text = view.text
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
