"""The value-free report, and replacing found spans with their tags."""

from __future__ import annotations

RedactionReport = dict[str, int]
"""Value-free report: kind name -> number of redactions. Never holds secret text."""

# A found span: (start, end, kind, replacement tag).
Span = tuple[int, int, str, str]


def merge_reports(*reports: RedactionReport) -> RedactionReport:
    """Sum the counts of several reports into a new one."""
    merged: RedactionReport = {}
    for report in reports:
        for kind, count in report.items():
            merged[kind] = merged.get(kind, 0) + count
    return merged


def apply_spans(text: str, spans: list[Span]) -> tuple[str, RedactionReport]:
    spans.sort()
    parts: list[str] = []
    report: RedactionReport = {}
    last = 0
    for start, end, kind, tag in spans:
        parts.append(text[last:start])
        parts.append(tag)
        report[kind] = report.get(kind, 0) + 1
        last = end
    parts.append(text[last:])
    return "".join(parts), report
