"""The intent timeline laid out for inline SVG: one lane per intent, a bar per turn range.

Each lane's SVG viewBox is the turn axis, so it scales without a script; coordinates are
strings so no template localization can turn ``2.5`` into ``2,5``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

MIN_BAR_SHARE = 0.012  # a one-turn range of a long session still gets a bar a finger can hit


@dataclass(frozen=True, slots=True)
class Bar:
    first: int
    last: int
    x: str
    width: str
    tip: str  # the SVG <title>: what hovering shows

    @property
    def anchor(self) -> str:
        return f"turn-{self.first}"


@dataclass(frozen=True, slots=True)
class Dormant:
    """The stretch between two ranges of one intent: the work waited here."""

    x: str
    width: str


@dataclass(frozen=True, slots=True)
class Lane:
    title: str
    state: str
    label: str  # the state's label (present.STATE_LABELS)
    bars: tuple[Bar, ...]
    dormant: tuple[Dormant, ...]


@dataclass(frozen=True, slots=True)
class Timeline:
    turns: int  # the axis: the session's turns (or the last turn a range names, if later)
    covered: int  # turns the summary covers; later ones are drawn as not summarized yet
    lanes: tuple[Lane, ...]

    @property
    def uncovered_x(self) -> str:
        return _num(self.covered)

    @property
    def uncovered_width(self) -> str:
        return _num(max(0, self.turns - self.covered))


def _num(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _ranges(raw: Any) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, list) or len(item) != 2:
            continue
        a, b = item
        if type(a) is int and type(b) is int and a >= 1 and b >= 1:  # a JSON true is no turn
            found.append((min(a, b), max(a, b)))
    return sorted(found)


def timeline_layout(
    intents: list[Any], *, turns: int, covered: int | None, labels: Mapping[str, str]
) -> Timeline | None:
    """None when no intent names a turn."""
    parsed = [
        (intent, spans)
        for intent in intents
        if isinstance(intent, dict) and (spans := _ranges(intent.get("ranges")))
    ]
    if not parsed:
        return None
    axis = max(turns, *(spans[-1][1] for _, spans in parsed))
    least = axis * MIN_BAR_SHARE
    # The order work started in; at one start the longer first, so a nested intent sits
    # right below the one it is nested in.
    parsed.sort(key=lambda pair: (pair[1][0][0], -(pair[1][-1][1] - pair[1][0][0])))
    lanes: list[Lane] = []
    for intent, spans in parsed:
        title = str(intent.get("title") or "Untitled intent")
        state = str(intent.get("state") or "")
        label = labels.get(state, state)
        bars = []
        for first, last in spans:
            width = max(float(last - first + 1), least)
            x = min(float(first - 1), axis - width)
            turns_text = f"turn {first}" if first == last else f"turns {first}\u2013{last}"
            tip = f"{title} — {label}, {turns_text}"
            bars.append(Bar(first, last, _num(x), _num(width), tip))
        dormant = tuple(
            Dormant(_num(prev[1]), _num(nxt[0] - 1 - prev[1]))
            for prev, nxt in pairwise(spans)
            if nxt[0] - 1 > prev[1]
        )
        lanes.append(Lane(title, state, label, tuple(bars), dormant))
    shown = axis if covered is None else max(0, min(covered, axis))
    return Timeline(axis, shown, tuple(lanes))
