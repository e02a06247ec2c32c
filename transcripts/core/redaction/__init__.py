"""Credential and exfiltration-URL redaction (pure: standard library only, no Django).

A port of the original's ``redact_credentials`` and ``redact_exfiltration_urls`` (reference
§4.3, §4.4) with current provider formats, run at the transcript write boundary
(:func:`redact_text`, :func:`redact_value`) and on model-written summary payloads
(:func:`redact_payload`). What counts as a secret is :mod:`.patterns`. A call: one scan
(:mod:`.prefilter`), the fast path (:mod:`.views`), pass 1 (:mod:`.finders`), passes 2 and 3
(:mod:`.credentials`), exfiltration URLs (:mod:`.urls`).

Rounds repeat to a fixpoint: a tag ends in "]", which can satisfy a neighbour's
look-behind the original character did not (two rounds when something was found).
No pattern backtracks catastrophically: where the original is quadratic or worse (JWT,
Telegram, PEM without END, S3 presigned) linear finders return the same matches, and
1 MB inputs take well under a second (``bench/bench_redaction.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import prefilter
from .batch import all_unchanged
from .credentials import credentials_round
from .report import RedactionReport, merge_reports
from .urls import exfil_round
from .views import View, might_contain_secret

__all__ = [
    "RedactionReport",
    "merge_reports",
    "redact_credentials",
    "redact_exfiltration_urls",
    "redact_payload",
    "redact_text",
    "redact_value",
]

# Every round that changes the text replaces a span with a tag no rule matches, so the
# loop converges; the cap bounds a crafted input that unlocks one new match per round.
_MAX_ROUNDS = 16

_Round = Callable[[str, "View | None"], tuple[str, RedactionReport]]
Redact = Callable[[str], tuple[str, RedactionReport]]


def _then(first: _Round, second: _Round) -> _Round:
    """One round of ``first`` then ``second``; an unchanged text keeps its view (and its
    windows and candidates)."""

    def round_(text: str, view: View | None) -> tuple[str, RedactionReport]:
        out, found = first(text, view)
        out, more = second(out, view if out is text else None)
        return out, merge_reports(found, more) if found else more

    return round_


# Write-boundary order (reference §1.5): URLs, then credentials; summaries (§4.1): reversed.
_write_boundary_round = _then(exfil_round, credentials_round)
_summary_round = _then(credentials_round, exfil_round)


def _redact(text: str, round_: _Round) -> tuple[str, RedactionReport]:
    triggers = prefilter.scan_text(text)
    if triggers is not None and triggers <= prefilter.ASSIGNMENT_ONLY:
        # No trigger, or only key = value keywords ("passed", "keys") with no separator
        # after any of them: no rule can match, no view, no regex.
        return text, {}
    first = View(text, triggers)
    if not might_contain_secret(first):
        return text, {}  # the fast path: plain prose never reaches a regex
    view: View | None = first
    report: RedactionReport = {}
    for _ in range(_MAX_ROUNDS):
        text, found = round_(text, view)
        view = None
        if not found:  # nothing replaced: the text is a fixpoint
            break
        report = merge_reports(report, found)
    return text, report


def redact_credentials(text: str) -> tuple[str, RedactionReport]:
    """Replace credentials (pattern table, base64-encoded, bare AWS secrets) with tags."""
    return _redact(text, credentials_round)


def redact_exfiltration_urls(text: str) -> tuple[str, RedactionReport]:
    """Replace each suspicious URL with ``[REDACTED: suspicious URL to {host}]``."""
    if "://" not in text:
        return text, {}
    return _redact(text, exfil_round)


def redact_text(text: str) -> tuple[str, RedactionReport]:
    """``text`` with secrets replaced, and a value-free report {kind: count}; idempotent:
    ``redact_text(redact_text(x)[0])[0] == redact_text(x)[0]``."""
    return _redact(text, _write_boundary_round)


def _unique_key(key: str, taken: dict[Any, Any]) -> str:
    """``key`` or, when two keys redact to the same text, ``key (2)``, ``key (3)``…:
    a redacted key never silently replaces another entry's value."""
    if key not in taken:
        return key
    n = 2
    while f"{key} ({n})" in taken:
        n += 1
    return f"{key} ({n})"


def _redact_tree(value: Any, redact: Redact) -> tuple[Any, RedactionReport]:
    """Every string inside dicts, lists and tuples, keys included, into new containers.
    Iterative: summaries redact model output of any depth, and a redactor must never be
    the thing that fails (``RecursionError``)."""
    reports: list[RedactionReport] = []

    def text(node: str) -> str:
        out, report = redact(node)
        if report:
            reports.append(report)
        return out

    if not isinstance(value, (dict, list, tuple)):
        return text(value) if isinstance(value, str) else value, merge_reports(*reports)
    # Frames: (source container, its items to visit, the output being built, its key in
    # the parent). A finished output is placed into its parent's when its frame is popped,
    # so order is kept; tuples are built as lists.
    stack: list[tuple[Any, Any, Any, Any]] = []

    def push(node: Any, key: Any) -> None:
        if isinstance(node, dict):
            stack.append((node, iter(node.items()), {}, key))
        else:
            stack.append((node, iter(enumerate(node)), [], key))

    push(value, None)
    while True:
        source, items, out, key = stack[-1]
        step = next(items, None)
        if step is None:
            stack.pop()
            item = tuple(out) if isinstance(source, tuple) else out
            if not stack:
                return item, merge_reports(*reports)
            out = stack[-1][2]
        else:
            key, item = step
            if isinstance(item, (dict, list, tuple)):
                push(item, key)
                continue
            if isinstance(item, str):
                item = text(item)
        if isinstance(out, dict):
            out[_unique_key(text(key) if isinstance(key, str) else key, out)] = item
        else:
            out.append(item)


def _strings_of(value: Any) -> list[str]:
    """Every string inside ``value`` (dict keys included), each once."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found[node] = None
        elif isinstance(node, dict):
            found.update((key, None) for key in node if isinstance(key, str))
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return list(found)


def redact_value(value: Any) -> tuple[Any, RedactionReport]:
    """Redact every ``str`` inside dicts/lists/tuples, dict keys included, in
    write-boundary order; non-string leaves are kept, and two keys that redact alike
    both stay (``key (2)``).

    A container's strings are first judged together (:func:`.batch.all_unchanged`): a
    row's meta (a timestamp, a tool-use id, each a window run) then costs one engine run,
    not one per string."""
    if isinstance(value, (dict, list, tuple)) and all_unchanged(_strings_of(value)):
        return _redact_tree(value, lambda text: (text, {}))
    return _redact_tree(value, redact_text)


def redact_payload(value: Any) -> tuple[Any, RedactionReport]:
    """As :func:`redact_value`, in the summaries order: credentials, then URLs (§4.1)."""
    return _redact_tree(value, lambda text: _redact(text, _summary_round))
