"""Rounds to a fixpoint, and the public text entry points."""

from __future__ import annotations

from collections.abc import Callable

from . import prefilter
from .credentials import credentials_round
from .report import RedactionReport, merge_reports
from .urls import exfil_round
from .views import View, might_contain_secret

# Every round that changes the text replaces at least one span with a tag that no rule
# matches, so the loop converges. The cap bounds the cost on a crafted input that
# unlocks one new match per round. Realistic text needs at most two rounds.
_MAX_ROUNDS = 16

_Round = Callable[[str, "View | None"], tuple[str, RedactionReport]]


def _write_boundary_round(text: str, view: View | None) -> tuple[str, RedactionReport]:
    out, urls = exfil_round(text, view)
    # An unchanged text keeps its view (and its windows and candidates).
    out, creds = credentials_round(out, view if out is text else None)
    return out, merge_reports(urls, creds) if urls else creds


def _summary_round(text: str, view: View | None) -> tuple[str, RedactionReport]:
    out, creds = credentials_round(text, view)
    out, urls = exfil_round(out, view if out is text else None)
    return out, merge_reports(creds, urls) if urls else creds


def _redact(text: str, round_: _Round) -> tuple[str, RedactionReport]:
    triggers = prefilter.scan_text(text)
    if triggers is not None and triggers <= prefilter.ASSIGNMENT_ONLY:
        # One C scan found no trigger, or only key = value keywords ("passed", "keys")
        # with no separator after any of them: no rule can match, no view, no regex.
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
        for kind, count in found.items():
            report[kind] = report.get(kind, 0) + count
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
    """Return ``text`` with secrets replaced and a value-free report {kind: count}.

    Write-boundary order (reference §1.5): exfiltration URLs, then credentials.
    Idempotent: ``redact_text(redact_text(x)[0])[0] == redact_text(x)[0]``.
    """
    return _redact(text, _write_boundary_round)


def redact_summary_text(text: str) -> tuple[str, RedactionReport]:
    return _redact(text, _summary_round)
