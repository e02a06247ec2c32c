"""Every heuristic and redaction pattern is linear in its input, counted in steps.

A user turn that is one long "word" once cost 0.6 s per pattern call (``VALUE_NOT``
re-scanned the run from every start); patterns run on every user turn and every stored
row, so one quadratic pattern stalls the server. The patterns are collected by walking
the modules (a new pattern is covered without touching this file), and each is run by the
step-counting interpreter of :mod:`tests.regex_steps` over long runs of word characters,
digits and punctuation, and over the shapes that lead it to each unbounded repeat
(``password=`` + a long run). Steps, not seconds: the bound is ``STEPS_PER_CHAR * n`` at
two sizes eight times apart, so quadratic growth fails at the larger one whatever the
machine's load.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.regex_steps import (
    BudgetExceeded,
    compile_pattern,
    finditer_spans,
    literal_prefixes,
)
from transcripts.core.redaction.patterns import Rule

# Packages whose module-level patterns run on user text: the heuristic summarizer and the
# rest of summaries' core, and the redaction engine with its pattern tables.
PACKAGES = ("summaries.core", "transcripts.core.redaction")
SIZES = (200, 1600)
# The costliest linear patterns take ~230 steps per character (a hundred-word alternation
# tried at every word boundary, a bounded ``{1,80}`` item); a quadratic one takes ~n/2 =
# 800 at n = 1,600. Growth is checked too: 8x the input may cost at most 12x the steps
# (linear: 8x; quadratic: 64x).
STEPS_PER_CHAR = 400
MAX_GROWTH = 12


def _modules() -> Iterator[ModuleType]:
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{name}."):
            yield importlib.import_module(info.name)


def _patterns_in(value: object, seen: set[int], out: list[re.Pattern]) -> None:  # type: ignore[type-arg]
    if isinstance(value, re.Pattern):
        if id(value) not in seen:
            seen.add(id(value))
            out.append(value)
        return
    if isinstance(value, Rule) and value.finder != "regex":
        # The engine never runs such a rule's pattern (it documents the language); its
        # finder runs the pieces, which are module patterns collected on their own.
        _patterns_in(value.gate, seen, out)
        return
    if isinstance(value, dict):
        for v in value.values():
            _patterns_in(v, seen, out)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            _patterns_in(v, seen, out)


def _collect() -> list[tuple[str, re.Pattern]]:  # type: ignore[type-arg]
    seen: set[int] = set()
    found: list[tuple[str, re.Pattern]] = []  # type: ignore[type-arg]
    for module in _modules():
        for attr, value in vars(module).items():
            if attr.startswith("__"):
                continue
            pats: list[re.Pattern] = []  # type: ignore[type-arg]
            _patterns_in(value, seen, pats)
            for i, p in enumerate(pats):
                suffix = f"[{i}]" if len(pats) > 1 else ""
                found.append((f"{module.__name__}.{attr}{suffix}", p))
    return found


PATTERNS = _collect()


def _generic(n: int) -> list[str]:
    """Long runs that no pattern should have to re-scan from every start."""
    return [
        "x" * n,  # one long "word"
        ("aZ09_" * n)[:n],
        "7" * n,  # digits
        ("-./:@`'=+_~,;#" * n)[:n],  # mixed punctuation
        ("x." * n)[:n],
        ("ab-" * n)[:n],
        ("a " * n)[:n],
        " " * n,
        ("不是" * n)[:n],  # a run of letters in a script without spaces
    ]


def _shaped(prefix: str, n: int) -> list[str]:
    """The text that leads the pattern to an unbounded repeat, then a long run there."""
    return [
        prefix + "x" * n,
        (prefix * n)[: max(n, len(prefix))],
        ((prefix + "x1 ") * n)[:n],
    ]


def _inputs(pattern: re.Pattern, n: int) -> list[str]:  # type: ignore[type-arg]
    texts = _generic(n)
    for prefix in literal_prefixes(pattern, limit=6):
        texts.extend(_shaped(prefix, n))
    return texts


def _as_subject(pattern: re.Pattern, text: str) -> str | bytes:  # type: ignore[type-arg]
    return text.encode("utf-8", "replace") if isinstance(pattern.pattern, bytes) else text


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_pattern_steps_grow_linearly_with_input(name: str, pattern: re.Pattern) -> None:  # type: ignore[type-arg]
    prog = compile_pattern(pattern)
    steps_at: dict[int, list[int]] = {}
    for n in SIZES:
        for text in _inputs(pattern, n):
            subject = _as_subject(pattern, text)
            interp_text = subject.decode("latin-1") if isinstance(subject, bytes) else subject
            budget = STEPS_PER_CHAR * max(len(interp_text), 1)
            try:
                steps, spans = finditer_spans(prog, interp_text, budget)
            except BudgetExceeded:
                pytest.fail(
                    f"{name} takes more than {STEPS_PER_CHAR} steps per character on "
                    f"{text[:40]!r}… (n={len(text)}): it re-scans its input"
                )
            # The interpreter read the pattern as re does (same matches), so its step
            # count is the work re does.
            assert spans == [m.span() for m in pattern.finditer(subject)], name
            steps_at.setdefault(n, []).append(steps)
    small, large = SIZES
    for i, (a, b) in enumerate(zip(steps_at[small], steps_at[large], strict=True)):
        # (floor: a bounded repeat, "{1,2000}", may match the small input whole and fail
        # on the large one after its bound; that is a constant, not growth)
        assert b <= MAX_GROWTH * max(a, 4 * small), (
            f"{name}: input {i} costs {a} steps at n={small} and {b} at n={large}"
        )


def test_patterns_are_collected_from_every_package() -> None:
    names = {n for n, _ in PATTERNS}
    assert "summaries.core.heuristic.constraints.VALUE_NOT" in names
    assert any(n.startswith("transcripts.core.redaction.patterns.assignments.") for n in names)
    assert len(PATTERNS) > 100


# Triggers inside a nested alternative, which the prefix sampler does not reach: each
# was quadratic ("vercel" then a scan to the next operator; ", because" then ".*").
CRAFTED = {
    "summaries.core.heuristic.evidence._DEPLOY_CMD": lambda n: ("vercel " * n)[:n],
    "summaries.core.heuristic.constraints._NOT_PHRASE": lambda n: (
        (", not x, because a" * n)[:n] + "\nz"
    ),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_nested_triggers_stay_linear(name: str) -> None:
    pattern = dict(PATTERNS)[name]
    prog = compile_pattern(pattern)
    for n in SIZES:
        text = CRAFTED[name](n)
        try:
            finditer_spans(prog, text, STEPS_PER_CHAR * len(text))
        except BudgetExceeded:
            pytest.fail(f"{name} re-scans {text[:30]!r}… (n={len(text)})")
