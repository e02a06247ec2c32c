"""Redaction of every string inside nested dicts, lists and tuples: values and dict keys.

The walk is iterative (an explicit stack), so no nesting depth can raise
``RecursionError``: writers refuse content nested deeper than
``transcripts.core.content.MAX_DEPTH`` before redaction, but the summaries redact model
output, and a redactor must never be the thing that fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .batch import all_unchanged
from .report import RedactionReport, merge_reports
from .rounds import redact_summary_text, redact_text

Redact = Callable[[str], tuple[str, RedactionReport]]


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
    reports: list[RedactionReport] = []

    def text(node: str) -> str:
        out, report = redact(node)
        if report:
            reports.append(report)
        return out

    if isinstance(value, str):
        return text(value), merge_reports(*reports)
    if not isinstance(value, (dict, list, tuple)):
        return value, merge_reports()
    # Each frame: (source container, its items to visit, the output being built, its key
    # in the parent). A child container gets its own frame; its finished output is placed
    # into the parent when its frame is popped, so order is kept. Tuples are built as
    # lists and converted when finished.
    root_out: list[Any] = []
    stack: list[tuple[Any, Any, Any, Any]] = []

    def push(node: Any, parent_key: Any) -> None:
        if isinstance(node, dict):
            stack.append((node, iter(node.items()), {}, parent_key))
        else:
            stack.append((node, iter(enumerate(node)), [], parent_key))

    def place(out: Any, key: Any, item: Any) -> None:
        if isinstance(out, dict):
            out[_unique_key(text(key) if isinstance(key, str) else key, out)] = item
        else:
            out.append(item)

    push(value, None)
    while stack:
        source, items, out, parent_key = stack[-1]
        step = next(items, None)
        if step is None:
            stack.pop()
            finished = tuple(out) if isinstance(source, tuple) else out
            if stack:
                place(stack[-1][2], parent_key, finished)
            else:
                root_out.append(finished)
            continue
        key, item = step
        if isinstance(item, (dict, list, tuple)):
            push(item, key)
        else:
            place(out, key, text(item) if isinstance(item, str) else item)
    return root_out[0], merge_reports(*reports)


def _left_alone(text: str) -> tuple[str, RedactionReport]:
    return text, {}


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
    """Redact every ``str`` inside dicts/lists/tuples, dict keys included (write-boundary
    order, :func:`redact_text`). Containers are rebuilt, never mutated; non-string leaves
    are kept as is. Two keys that redact alike both stay (``key (2)``).

    A container's strings are first judged together (:func:`.batch.all_unchanged`): a
    row's meta (a timestamp, a tool-use id, each a window run) then costs one engine run,
    not one per string."""
    if isinstance(value, (dict, list, tuple)) and all_unchanged(_strings_of(value)):
        return _redact_tree(value, _left_alone)
    return _redact_tree(value, redact_text)


def redact_payload(value: Any) -> tuple[Any, RedactionReport]:
    """As :func:`redact_value`, in the summaries order: credentials, then URLs (§4.1)."""
    return _redact_tree(value, redact_summary_text)
