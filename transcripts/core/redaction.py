"""Credential and exfiltration-URL redaction (placeholder: being written)."""

from __future__ import annotations

from typing import Any

RedactionReport = dict[str, int]


def redact_text(text: str) -> tuple[str, RedactionReport]:
    """Return ``text`` with secrets replaced and a value-free report {kind: count}."""
    return text, {}


def redact_value(value: Any) -> tuple[Any, RedactionReport]:
    """Recursively redact every ``str`` inside dicts/lists; keys and non-strings untouched."""
    return value, {}


def merge_reports(*reports: RedactionReport) -> RedactionReport:
    merged: RedactionReport = {}
    for report in reports:
        for kind, count in report.items():
            merged[kind] = merged.get(kind, 0) + count
    return merged
