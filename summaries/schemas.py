"""Bodies of the summary routes (the turn loop's are in ``transcripts.schemas``)."""

from __future__ import annotations

from typing import Literal

from ninja import Schema

from .core.intents import Intent


class SummaryOut(Schema):
    """A slot's summary: its intents (the payload model, ``summaries.core.intents``), the
    project notes, and when and from how many user turns it was written."""

    enabled: bool
    stale: bool
    intents: list[Intent]
    constraints: list[str]
    generated_at: float | None
    user_turns: int | None
    last_activity: str | None
    generate_state: Literal["ready", "generating", "too_few_turns", "unavailable"]
    covers_through_turn: int | None
    new_turns: int | None
    model: str | None
