"""A step-counting backtracking matcher for the subset of ``re`` our patterns use.

Python's ``re`` exposes no step counter and wall time is noise on a shared machine, so the
linearity test runs each pattern here instead: the pattern is parsed by ``re``'s own
parser (``re._parser``), compiled to a small backtracking VM that explores alternatives
in the order ``re`` does (greedy/lazy/possessive repeats, atomic groups, look-around,
the leftmost match of each ``finditer`` step), and every executed instruction counts one
step. ``re`` has no memoisation either, so a pattern that re-scans a run from every start
position costs ~n^2 steps here as it costs ~n^2 work there.

:func:`finditer_spans` also returns the match spans, so the caller can check them against
``pattern.finditer`` and know the interpreter read the pattern as ``re`` does.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# re's own parser and opcode names (private, untyped: read as Any)
C: Any = importlib.import_module("re._constants")
sre_parse: Any = importlib.import_module("re._parser")

_Pred = Callable[[str], bool]
_WORD_ASCII = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE_ASCII = frozenset(" \t\n\r\f\v")


class BudgetExceeded(Exception):
    """The pattern took more steps than the caller allowed (it is not linear)."""


class Unsupported(Exception):
    """The pattern uses a construct this interpreter does not model."""


@dataclass(frozen=True)
class _Flags:
    ignorecase: bool
    ascii: bool
    multiline: bool
    dotall: bool


def _is_word(c: str, fl: _Flags) -> bool:
    return c in _WORD_ASCII if fl.ascii else (c.isalnum() or c == "_")


def _category(code: Any, fl: _Flags) -> _Pred:
    if code == C.CATEGORY_DIGIT:
        return (lambda c: "0" <= c <= "9") if fl.ascii else str.isdecimal
    if code == C.CATEGORY_NOT_DIGIT:
        inner = _category(C.CATEGORY_DIGIT, fl)
        return lambda c: not inner(c)
    if code == C.CATEGORY_WORD:
        return lambda c: _is_word(c, fl)
    if code == C.CATEGORY_NOT_WORD:
        return lambda c: not _is_word(c, fl)
    if code == C.CATEGORY_SPACE:
        return (lambda c: c in _SPACE_ASCII) if fl.ascii else str.isspace
    if code == C.CATEGORY_NOT_SPACE:
        inner = _category(C.CATEGORY_SPACE, fl)
        return lambda c: not inner(c)
    raise Unsupported(f"category {code}")


def _variants(c: str, fl: _Flags) -> tuple[str, ...]:
    if not fl.ignorecase:
        return (c,)
    if fl.ascii and not c.isascii():
        return (c,)
    return (c, c.lower(), c.upper())


def _in_range(lo: str, hi: str) -> _Pred:
    return lambda c: lo <= c <= hi


def _char_pred(op: Any, av: Any, fl: _Flags) -> _Pred:
    """A predicate for one single-character node (LITERAL, NOT_LITERAL, ANY, IN)."""
    if op == C.LITERAL or op == C.NOT_LITERAL:
        lit = chr(av)
        lits = set(_variants(lit, fl))
        if op == C.LITERAL:
            return lambda c: any(v in lits for v in _variants(c, fl))
        return lambda c: not any(v in lits for v in _variants(c, fl))
    if op == C.ANY:
        return (lambda c: True) if fl.dotall else (lambda c: c != "\n")
    if op == C.IN:
        negate = False
        tests: list[_Pred] = []
        for iop, iav in av:
            if iop == C.NEGATE:
                negate = True
            elif iop == C.LITERAL:
                tests.append(chr(iav).__eq__)
            elif iop == C.RANGE:
                tests.append(_in_range(chr(iav[0]), chr(iav[1])))
            elif iop == C.CATEGORY:
                tests.append(_category(iav, fl))
            else:
                raise Unsupported(f"class item {iop}")

        def member(c: str) -> bool:
            hit = any(t(v) for v in _variants(c, fl) for t in tests)
            return hit != negate

        return member
    raise Unsupported(f"char op {op}")


# VM instructions: tuples whose first item is the opcode.
_CHAR, _SPLIT, _JMP, _AT, _SUB, _MATCH = range(6)


@dataclass
class _Program:
    code: list[Any] = field(default_factory=list)


def _compile(sub: Any, fl: _Flags, prog: _Program) -> None:
    for op, av in sub:
        _compile_node(op, av, fl, prog)


def _emit_repeat(lo: int, hi: int, body: Any, fl: _Flags, prog: _Program, lazy: bool) -> None:
    if body.getwidth()[0] == 0:
        raise Unsupported("a repeat whose body can match empty")
    for _ in range(lo):
        _compile(body, fl, prog)
    code = prog.code
    if hi == C.MAXREPEAT:
        # L: split(body, out) ; body ; jmp L ; out:
        loop = len(code)
        code.append(None)
        _compile(body, fl, prog)
        code.append((_JMP, loop))
        out = len(code)
        code[loop] = (_SPLIT, out, loop + 1) if lazy else (_SPLIT, loop + 1, out)
        return
    holes: list[int] = []
    for _ in range(hi - lo):
        holes.append(len(code))
        code.append(None)
        _compile(body, fl, prog)
    out = len(code)
    for h in holes:
        code[h] = (_SPLIT, out, h + 1) if lazy else (_SPLIT, h + 1, out)


def _subprogram(sub: Any, fl: _Flags) -> _Program:
    p = _Program()
    _compile(sub, fl, p)
    p.code.append((_MATCH,))
    return p


def _compile_node(op: Any, av: Any, fl: _Flags, prog: _Program) -> None:
    code = prog.code
    if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
        code.append((_CHAR, _char_pred(op, av, fl)))
    elif op == C.SUBPATTERN:
        _group, add, rem, sub = av
        inner = _Flags(
            ignorecase=(fl.ignorecase or bool(add & re.I)) and not (rem & re.I),
            ascii=fl.ascii or bool(add & re.A),
            multiline=(fl.multiline or bool(add & re.M)) and not (rem & re.M),
            dotall=(fl.dotall or bool(add & re.S)) and not (rem & re.S),
        )
        _compile(sub, inner, prog)
    elif op == C.BRANCH:
        alts = av[1]
        jumps: list[int] = []
        for i, alt in enumerate(alts):
            if i < len(alts) - 1:
                split = len(code)
                code.append(None)
                _compile(alt, fl, prog)
                jumps.append(len(code))
                code.append(None)
                code[split] = (_SPLIT, split + 1, len(code))
            else:
                _compile(alt, fl, prog)
        for j in jumps:
            code[j] = (_JMP, len(code))
    elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
        lo, hi, body = av
        _emit_repeat(lo, hi, body, fl, prog, lazy=op == C.MIN_REPEAT)
    elif op == C.POSSESSIVE_REPEAT:
        lo, hi, body = av
        possessive = _Program()
        _emit_repeat(lo, hi, body, fl, possessive, lazy=False)
        possessive.code.append((_MATCH,))
        code.append((_SUB, "atomic", possessive, 0))
    elif op == C.ATOMIC_GROUP:
        code.append((_SUB, "atomic", _subprogram(av, fl), 0))
    elif op in (C.ASSERT, C.ASSERT_NOT):
        direction, sub = av
        width = 0
        if direction < 0:
            lo, hi = sub.getwidth()
            if lo != hi:
                raise Unsupported("variable-width look-behind")
            width = lo
        kind = "ahead" if direction > 0 else "behind"
        kind += "" if op == C.ASSERT else "_not"
        code.append((_SUB, kind, _subprogram(sub, fl), width))
    elif op == C.AT:
        code.append((_AT, av, fl))
    else:
        raise Unsupported(f"op {op}")


class _Counter:
    __slots__ = ("budget", "steps")

    def __init__(self, budget: int) -> None:
        self.steps = 0
        self.budget = budget


def _at(code: Any, fl: _Flags, text: str, pos: int) -> bool:
    n = len(text)
    if code == C.AT_BEGINNING:
        return pos == 0 or (fl.multiline and text[pos - 1] == "\n")
    if code == C.AT_BEGINNING_STRING:
        return pos == 0
    if code == C.AT_END:
        if fl.multiline:
            return pos == n or text[pos] == "\n"
        return pos == n or (pos == n - 1 and text[pos] == "\n")
    if code == C.AT_END_STRING:
        return pos == n
    if code in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
        if n == 0:
            return False
        before = pos > 0 and _is_word(text[pos - 1], fl)
        after = pos < n and _is_word(text[pos], fl)
        return bool((before != after) == (code == C.AT_BOUNDARY))
    raise Unsupported(f"at {code}")


def _run(prog: _Program, text: str, start: int, counter: _Counter) -> int | None:
    """The end of the first match of ``prog`` at ``start`` (``re``'s order), or None."""
    code = prog.code
    n = len(text)
    stack: list[tuple[int, int]] = [(0, start)]
    while stack:
        pc, pos = stack.pop()
        while True:
            counter.steps += 1
            if counter.steps > counter.budget:
                raise BudgetExceeded
            ins = code[pc]
            op = ins[0]
            if op == _CHAR:
                if pos < n and ins[1](text[pos]):
                    pos += 1
                    pc += 1
                    continue
                break
            if op == _SPLIT:
                stack.append((ins[2], pos))
                pc = ins[1]
                continue
            if op == _JMP:
                pc = ins[1]
                continue
            if op == _AT:
                if _at(ins[1], ins[2], text, pos):
                    pc += 1
                    continue
                break
            if op == _SUB:
                kind, sub, width = ins[1], ins[2], ins[3]
                if kind == "atomic":
                    end = _run(sub, text, pos, counter)
                    if end is None:
                        break
                    pos = end
                    pc += 1
                    continue
                if kind.startswith("ahead"):
                    ok = _run(sub, text, pos, counter) is not None
                else:
                    ok = pos >= width and _run(sub, text, pos - width, counter) is not None
                if ok == (not kind.endswith("_not")):
                    pc += 1
                    continue
                break
            return pos  # _MATCH
    return None


def compile_pattern(pattern: re.Pattern[str] | re.Pattern[bytes]) -> _Program:
    """The VM program of ``pattern`` (raises :class:`Unsupported`)."""
    source = pattern.pattern
    is_bytes = isinstance(source, bytes)
    flags = pattern.flags
    parsed = sre_parse.parse(source, flags)
    fl = _Flags(
        ignorecase=bool(flags & re.I),
        ascii=is_bytes or bool(flags & re.A),
        multiline=bool(flags & re.M),
        dotall=bool(flags & re.S),
    )
    return _subprogram(parsed, fl)


def finditer_spans(prog: _Program, text: str, budget: int) -> tuple[int, list[tuple[int, int]]]:
    """(steps, spans) of ``finditer`` over ``text``: every start position in turn.

    Raises :class:`BudgetExceeded` once ``budget`` steps are spent.
    """
    counter = _Counter(budget)
    spans: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos <= n:
        end = _run(prog, text, pos, counter)
        if end is None:
            pos += 1
            continue
        spans.append((pos, end))
        pos = end if end > pos else pos + 1
    return counter.steps, spans


def literal_prefixes(pattern: re.Pattern[str] | re.Pattern[bytes], limit: int = 12) -> list[str]:
    """Sample texts that lead the pattern up to each of its unbounded repeats.

    One sample per top-level alternative, each cut where an unbounded repeat starts (a
    long run fed there is what a quadratic pattern re-scans): ``password=`` for an
    assignment key, ``x not `` for "X, not Y". Literals are taken as written; a class
    contributes its first member among common characters.
    """
    source = pattern.pattern
    parsed = sre_parse.parse(source, pattern.flags)
    fl = _Flags(False, isinstance(source, bytes), False, False)
    candidates = "xa0_-./:@= \t,'\"`#"

    def sample(sub: Any, acc: list[str], cuts: list[str]) -> None:
        for op, av in sub:
            if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
                if op == C.LITERAL:
                    acc.append(chr(av))
                    continue
                pred = _char_pred(op, av, fl)
                extra = [chr(a) for o, a in (av if op == C.IN else []) if o == C.LITERAL]
                pick = next((c for c in (*extra, *candidates) if pred(c)), "x")
                acc.append(pick)
            elif op == C.SUBPATTERN:
                sample(av[3], acc, cuts)
            elif op == C.ATOMIC_GROUP:
                sample(av, acc, cuts)
            elif op == C.BRANCH:
                sample(av[1][0], acc, cuts)
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
                lo, hi, body = av
                if hi == C.MAXREPEAT:
                    cuts.append("".join(acc))
                for _ in range(max(lo, 1) if hi == C.MAXREPEAT else lo):
                    sample(body, acc, cuts)
            # assertions and anchors add no characters

    out: list[str] = []
    tops: list[Any] = [parsed]
    if len(parsed) == 1 and parsed[0][0] == C.BRANCH:
        tops = list(parsed[0][1][1])
    elif len(parsed) == 1 and parsed[0][0] == C.SUBPATTERN and parsed[0][1][3]:
        inner = parsed[0][1][3]
        if len(inner) == 1 and inner[0][0] == C.BRANCH:
            tops = list(inner[0][1][1])
    for top in tops:
        acc: list[str] = []
        cuts: list[str] = []
        sample(top, acc, cuts)
        cuts.append("".join(acc))
        out.extend(c for c in cuts if c and c not in out)
    return out[:limit]
