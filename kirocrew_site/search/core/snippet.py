"""Snippets as typed fragments: the engines mark matches with two private-use characters
(never HTML), and the fragments carry text only, so whatever renders them escapes every
character of it, highlight or not. Transcript text can never become markup."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Fragment:
    text: str
    hit: bool  # a matched word: shown highlighted


def fragments(marked: str) -> tuple[Fragment, ...]:
    """``"a \\ue000b\\ue001 c"`` -> (a , plain), (b, hit), ( c, plain)."""
    out: list[Fragment] = []
    rest = marked
    while rest:
        start = rest.find(MARK_OPEN)
        if start < 0:
            out.append(Fragment(rest.replace(MARK_CLOSE, ""), False))
            break
        if start:
            out.append(Fragment(rest[:start].replace(MARK_CLOSE, ""), False))
        end = rest.find(MARK_CLOSE, start + 1)
        end = len(rest) if end < 0 else end
        hit = rest[start + 1 : end].replace(MARK_OPEN, "")
        if hit:
            out.append(Fragment(hit, True))
        rest = rest[end + 1 :]
    return tuple(_merge(f for f in out if f.text))


def _merge(parts: Iterable[Fragment]) -> list[Fragment]:
    merged: list[Fragment] = []
    for part in parts:
        if merged and merged[-1].hit == part.hit:
            merged[-1] = Fragment(merged[-1].text + part.text, part.hit)
        else:
            merged.append(part)
    return merged
