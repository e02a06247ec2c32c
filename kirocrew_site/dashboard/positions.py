"""The session page's opaque tokens (base64url JSON, checked on the way in): where its rows
end, and the gaps it has not loaded. The JS only echoes them. Unsigned on purpose: they
name positions in a transcript the reader may read whole, so an edited one can only
mis-number that reader's own page.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from .present import Item

# Why the page reads rows: a revision can change any row of the running turn, and a
# reconnected page may have missed one, so both read the running turn again.
REREAD_REASONS = frozenset({"revision", "resync"})
_TURN_ID = re.compile(r"turn-([1-9][0-9]{0,8})")


class InvalidToken(ValueError):
    pass


def _encode(values: list[Any]) -> str:
    raw = json.dumps(values, separators=(",", ":"), ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# The tokens this module issues are a few numbers and a timestamp (~100 characters); a
# longer one is forged, and is refused before it is decoded (a deep JSON nest in a few KB
# ran the parser out of stack: a 500).
MAX_TOKEN_CHARS = 512


def _decode(token: str, shape: tuple[type, ...]) -> list[Any]:
    if len(token) > MAX_TOKEN_CHARS:
        raise InvalidToken(token[:64])
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        values = json.loads(raw)
    except (binascii.Error, ValueError, RecursionError) as exc:
        raise InvalidToken(token) from exc
    if not isinstance(values, list) or len(values) != len(shape):
        raise InvalidToken(token)
    for value, kind in zip(values, shape, strict=True):
        # type(...) is: a JSON true is no turn count.
        if type(value) is not kind:
            raise InvalidToken(token)
        if isinstance(value, int) and not 0 <= value < 10**9:
            raise InvalidToken(token)
    return values


@dataclass(frozen=True, slots=True)
class Position:
    """Where the page's rows end, and where its running turn (the rows from the last user
    turn on: what a revision re-reads) starts."""

    after: str  # the cursor of the page's last row ("" = none yet: read from the start)
    turns: int  # user turns through that row
    turn_after: str  # the cursor of the row before the running turn ("" = session start)
    turn_turns: int  # user turns before the running turn
    turn_row: str  # the running turn's first row on the page ("" = none shown yet)

    @classmethod
    def start(cls, after: str, turns: int) -> Position:
        return cls(after, turns, after, turns, "")

    def read_from(self, reasons: list[str]) -> tuple[Position, str]:
        """Where a read for ``reasons`` (the frames the page saw) starts, and the first row
        on the page its answer replaces ("" = the answer is appended)."""
        if REREAD_REASONS.isdisjoint(reasons) or not self.turn_row:
            return self, ""
        return Position.start(self.turn_after, self.turn_turns), self.turn_row

    def advance(self, items: list[Item], turns: int) -> Position:
        turn_after, turn_turns, turn_row = self.turn_after, self.turn_turns, self.turn_row
        previous = self.after
        for item in items:
            if item.turn is not None:
                turn_after, turn_turns, turn_row = previous, item.turn - 1, item.cursor
            elif not turn_row:  # the running turn's rows start with this one
                turn_row = item.cursor
            previous = item.cursor
        return Position(previous, turns, turn_after, turn_turns, turn_row)

    def token(self) -> str:
        return _encode([self.after, self.turns, self.turn_after, self.turn_turns, self.turn_row])

    @classmethod
    def parse(cls, token: str) -> Position:
        return cls(*_decode(token, (str, int, str, int, str)))


@dataclass(frozen=True, slots=True)
class Gap:
    """Turns ``first..last`` that the page has not loaded (one marker)."""

    first: int
    last: int

    @property
    def count(self) -> int:
        return self.last - self.first + 1

    def split(self, first: int, last: int) -> tuple[Gap | None, Gap | None]:
        """What is left of this gap once turns ``first..last`` came: before and after them."""
        before = Gap(self.first, first - 1) if first > self.first else None
        after = Gap(last + 1, self.last) if last < self.last else None
        return before, after

    def token(self) -> str:
        return _encode([self.first, self.last])

    @classmethod
    def parse(cls, token: str) -> Gap:
        first, last = _decode(token, (int, int))
        if not 1 <= first <= last:
            raise InvalidToken(token)
        return cls(first, last)


def gap_request(gaps: list[Gap], target: str, size: int) -> tuple[Gap, int, int] | None:
    """``(gap, first, last)``: without ``target`` the one gap sent, its last ``size`` turns
    (its button); with one, the gap holding that turn, from it on (a link). None: no gap
    sent holds the target."""
    if not target:
        if len(gaps) != 1:
            raise InvalidToken("a gap's button sends exactly one gap")
        first, last = gaps[0].first, gaps[0].last
        return gaps[0], max(first, last - size + 1), last
    found = _TURN_ID.fullmatch(target)  # a link's fragment: turn-30
    if found is None:
        return None
    turn = int(found.group(1))
    held = next((gap for gap in gaps if gap.first <= turn <= gap.last), None)
    return None if held is None else (held, turn, min(held.last, turn + size - 1))
