"""Redaction of every string inside nested dicts, lists and tuples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .report import RedactionReport, merge_reports
from .rounds import _redact_summary_text, redact_text


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
