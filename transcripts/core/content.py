"""The one rule for JSON content that enters a transcript (docs/DESIGN.md, "One content
rule"), and ``bound_rows`` for rows already on disk: in the presenters, since finding a deep
line in the fold's hot path costs about as much as parsing it. ``MAX_DEPTH`` is far beyond
any agent's ``meta`` and far below orjson's 254 levels and Python's recursion limit.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import RecordRejected
from .fold import FoldReport

MAX_DEPTH = 64
MAX_TEXT_CHARS = 4_000_000
TOO_DEEP_MARKER = "[nested too deep]"
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson can write
_CONTAINERS = (dict, list)  # what a parsed JSON document nests

TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
NOT_FINITE = "numbers must be finite (no NaN or Infinity)"
INT_RANGE = "integers must fit in 64 bits"
NUL = "text may not contain NUL (U+0000)"
TOO_LONG = f"a string is longer than {MAX_TEXT_CHARS} characters"
BAD_KEY = "object keys must be strings"
NOT_JSON = "not a JSON value"


class ContentRejected(RecordRejected):
    """Content that breaks the rule above; nothing was written."""


def _text_problem(text: str) -> str | None:
    if len(text) > MAX_TEXT_CHARS:
        return TOO_LONG
    if "\x00" in text:
        return NUL
    return None


def _problem(value: Any, depth: int) -> str | None:
    kind = type(value)
    if kind is str:
        return _text_problem(value)
    if kind is dict or kind is list or kind is tuple:
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        if kind is dict:
            for key, item in value.items():
                if type(key) is not str:
                    return BAD_KEY
                problem = _text_problem(key) or _problem(item, depth + 1)
                if problem:
                    return problem
            return None
        for item in value:
            problem = _problem(item, depth + 1)
            if problem:
                return problem
        return None
    if kind is float:
        return None if math.isfinite(value) else NOT_FINITE
    if kind is int:
        return None if _INT_MIN <= value <= _INT_MAX else INT_RANGE
    if value is None or kind is bool:
        return None
    return NOT_JSON


def check_content(value: Any, *, what: str = "record") -> None:
    """Raise :class:`ContentRejected` when ``value`` breaks the content rule."""
    problem = _problem(value, 0)
    if problem:
        raise ContentRejected(f"{what}: {problem}")


def _exceeds_depth(container: Any, limit: int) -> bool:
    """Whether ``container`` holds containers more than ``limit`` levels below it (stops there)."""
    children = container.values() if type(container) is dict else container
    return limit <= 0 or any(
        _exceeds_depth(child, limit - 1) for child in children if type(child) in _CONTAINERS
    )


def bound_row(row: dict[str, Any]) -> dict[str, Any] | None:
    """``row`` with each field that makes it deeper than ``MAX_DEPTH`` replaced by
    ``TOO_DEEP_MARKER``; None when it is within the limit (the common case)."""
    deep = [
        key
        for key, value in row.items()
        if type(value) in _CONTAINERS and _exceeds_depth(value, MAX_DEPTH - 1)
    ]
    if not deep:
        return None
    return {key: TOO_DEEP_MARKER if key in deep else value for key, value in row.items()}


def bound_rows(rows: list[dict[str, Any]], report: FoldReport) -> list[dict[str, Any]]:
    """``rows`` with :func:`bound_row` applied, a ``too_deep`` anomaly per row changed (offset
    -1: not at a line); the list is copied only when something changed."""
    out = rows
    for index, row in enumerate(rows):
        bounded = bound_row(row)
        if bounded is None:
            continue
        if out is rows:
            out = list(rows)
        out[index] = bounded
        report.add("too_deep", -1, "", f"row ts {str(row.get('ts'))[:40]}")
    return out


def _not_finite(_name: str) -> Any:
    raise ContentRejected(NOT_FINITE)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e400 overflows to inf
        raise ContentRejected(NOT_FINITE)
    return number


def loads_checked(data: bytes | str) -> Any:
    """Parse a JSON document under the content rule (``ContentRejected``; ``ValueError``: not
    JSON). The stdlib parses it: orjson reads an integer past 64 bits as a float."""
    try:
        value = json.loads(data, parse_constant=_not_finite, parse_float=_finite_float)
    except RecursionError:  # deeper than the interpreter's stack: far past MAX_DEPTH
        raise ContentRejected(TOO_DEEP) from None
    check_content(value, what="body")
    return value
