"""Credentials: passes 1-3 over one text, one round (no fixpoint)."""

from __future__ import annotations

import base64
import binascii
from bisect import bisect_right
from collections.abc import Iterable

from . import patterns as P
from .bare_secret import contains_bare_secret
from .finders import credential_spans
from .report import RedactionReport, Span, apply_spans
from .views import View, might_contain_secret


def decodes_to_credential(chunk: str) -> bool:
    """Pass 2: ``chunk`` strictly base64-decodes to text that pass 1 matches."""
    try:
        raw = base64.b64decode(chunk, validate=True)
    except (binascii.Error, ValueError):
        return False
    view = View(raw.decode("utf-8", errors="ignore"))
    return might_contain_secret(view) and bool(credential_spans(view, first_only=True))


def contains_fixed_credential(view: View, among: Iterable[int] | None = None) -> bool:
    """Pass 1 or pass 2 would fire. Not pass 3, whose entropy guess is too loose for URLs."""
    if not might_contain_secret(view):
        return False
    if credential_spans(view, first_only=True, among=among):
        return True
    win = view.windows
    return win is not None and any(
        decodes_to_credential(chunk) for _, _, chunk in win.long_matches(P.B64_CHUNK_RE)
    )


class _Taken:
    """Sorted, disjoint spans already replaced by an earlier pass."""

    __slots__ = ("ends", "starts")

    def __init__(self, spans: list[Span]) -> None:
        self.starts = [s[0] for s in spans]
        self.ends = [s[1] for s in spans]

    def overlaps(self, start: int, end: int) -> bool:
        k = bisect_right(self.starts, start)
        if k > 0 and self.ends[k - 1] > start:
            return True
        return k < len(self.starts) and self.starts[k] < end

    def add(self, start: int, end: int) -> None:
        k = bisect_right(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


def credentials_round(text: str, view: View | None = None) -> tuple[str, RedactionReport]:
    view = view or View(text)
    if not might_contain_secret(view):
        return text, {}
    spans = credential_spans(view)
    win = view.windows
    if win is not None and win.long:
        # Passes 2 and 3 scan the original text, like the original, and skip a chunk
        # an earlier pass already replaced (the original's ``result.replace`` no longer
        # found it).
        taken = _Taken(spans)
        for start, end, chunk in win.long_matches(P.B64_CHUNK_RE):
            if not taken.overlaps(start, end) and decodes_to_credential(chunk):
                spans.append((start, end, P.ENCODED_KIND, P.ENCODED_CREDENTIAL_TAG))
                taken.add(start, end)
        for start, end, run in win.long_matches(P.BARE_SECRET_RUN_RE):
            if (
                not taken.overlaps(start, end)
                and not P.is_base64_file(text, start, run)
                and contains_bare_secret(run)
            ):
                spans.append((start, end, P.BARE_AWS_KIND, P.CREDENTIAL_TAG))
                taken.add(start, end)
    if not spans:
        return text, {}
    return apply_spans(text, spans)
