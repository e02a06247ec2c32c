"""The stored intent keys and normalizing shortcuts the normalize_payload tests share."""

from __future__ import annotations

from typing import Any

from summaries.core.payload import normalize_payload

# The stored intent's keys, in the payload model's order (summaries.core.intents).
KEYS = [
    "title",
    "initial_intent",
    "progress",
    "next_steps",
    "ranges",
    "status",
    "verified",
    "origin_turn",
    "state",
    "last_touched_turn",
    "evidence",
]


def normalized(raw: object, **caps: int) -> dict[str, Any] | None:
    """``normalize_payload``'s model as the JSON it is stored as (None stays None)."""
    out = normalize_payload(raw, **caps)
    return None if out is None else out.model_dump(mode="json")


def one(intent: dict[str, Any]) -> dict[str, Any]:
    out = normalized({"intents": [intent]})
    assert out is not None
    assert len(out["intents"]) == 1
    result: dict[str, Any] = out["intents"][0]
    return result
