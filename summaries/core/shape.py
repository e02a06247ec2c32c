"""A reply's one way to a storable summary: parse, check, normalize.

The pass (``services._run_pass``) and the quality bench's replay
(``bench/summary_quality.py --backend replay:DIR``) both call :func:`shape_reply`, so a
replayed reply is scored through exactly the path a live one is stored through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .checks import check_reply
from .extract import count_user_turns
from .intents import SummaryChecks, SummaryPayload
from .payload import normalize_payload
from .reply import parse_reply
from .structure import build_index
from .transcript_turn import TranscriptTurn


@dataclass(frozen=True, slots=True)
class Shaped:
    payload: SummaryPayload | None  # None: nothing usable, keep the previous summary
    checks: SummaryChecks


def shape_reply(
    reply: object,
    turns: Sequence[TranscriptTurn],
    *,
    user_turns: int | None = None,
    max_intents: int = 50,
    max_constraints: int = 50,
    known_constraints: frozenset[str] = frozenset(),
) -> Shaped:
    """``reply`` (the backend's raw text) checked against ``turns`` and shaped; the
    payload carries what the checks did. ``user_turns`` defaults to the turns' count."""
    total = count_user_turns(turns) if user_turns is None else user_turns
    checked, report = check_reply(
        parse_reply(reply),
        build_index(turns),
        user_turns=total,
        known_constraints=known_constraints,
    )
    shaped = normalize_payload(checked, max_intents=max_intents, max_constraints=max_constraints)
    if shaped is None:
        return Shaped(None, report)
    return Shaped(shaped.model_copy(update={"checks": report}), report)
