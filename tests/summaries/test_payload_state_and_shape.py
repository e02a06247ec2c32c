"""derive_state, and normalize_payload at the top level: what is usable, the intent's
shape and key order, the returned model, and an unmutated input."""

from __future__ import annotations

import copy

import pytest

from summaries.core.intents import Intent, SummaryPayload, derive_state
from summaries.core.payload import normalize_payload
from tests.summaries.payload_helpers import KEYS, normalized

# --- derive_state --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "verified", "state"),
    [
        ("abandoned", True, "dropped"),
        ("abandoned", False, "dropped"),
        ("abandoned", None, "dropped"),
        ("completed", False, "needs-you"),
        ("completed", True, "done"),
        ("completed", None, "done"),
        ("active", True, "in-progress"),
        ("active", False, "in-progress"),
        ("active", None, "in-progress"),
        ("weird", False, "in-progress"),
        (None, None, "in-progress"),
        ("completed", 0, "done"),  # only a real False means "never confirmed"
    ],
)
def test_derive_state(status: object, verified: object, state: str) -> None:
    assert derive_state(status, verified) == state


# --- top level -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        "text",
        {},
        {"intents": []},
        {"intents": None},
        {"intents": "abc"},
        {"intents": 5},
        {"intents": {"title": "a dict, not a list"}},
        {"intents": [None, 3, "x", {}, {"title": ""}, {"title": "  "}, {"title": 7}]},
        {"constraints": ["only notes"]},
    ],
)
def test_nothing_usable_is_none(raw: object) -> None:
    assert normalized(raw) is None


def test_full_intent_shape_and_key_order() -> None:
    raw = {
        "intents": [
            {
                "title": "  Fix the build  ",
                "ranges": [[1, 4], [7, 9]],
                "status": "completed",
                "verified": False,
                "origin_turn": 1,
                "initial_intent": "  CI was red  ",
                "progress": ["  tests pass locally ", "", 3, "  "],
                "next_steps": [{"what": "run CI", "why": "never ran", "expect": "green"}],
                "extra": "dropped",
            }
        ],
        "constraints": ["  use make test  "],
        "other": 1,
    }
    out = normalized(raw)
    assert out == {
        "intents": [
            {
                "title": "Fix the build",
                "initial_intent": "CI was red",
                "progress": ["tests pass locally"],
                "next_steps": [{"what": "run CI", "why": "never ran", "expect": "green"}],
                "ranges": [[1, 4], [7, 9]],
                "status": "completed",
                "verified": False,
                "state": "needs-you",
                "last_touched_turn": 9,
                "origin_turn": 1,
                "evidence": None,
            }
        ],
        "constraints": ["use make test"],
        "checks": None,  # set by the pass (shape_reply), not by the normalizer
    }
    assert out is not None
    assert list(out) == ["intents", "constraints", "checks"]
    assert list(out["intents"][0]) == KEYS


def test_normalize_returns_the_payload_model() -> None:
    out = normalize_payload({"intents": [{"title": "t", "ranges": [[2, 3]], "verified": True}]})
    assert isinstance(out, SummaryPayload)
    (intent,) = out.intents
    assert isinstance(intent, Intent)
    assert (intent.title, intent.ranges, intent.state, intent.last_touched_turn) == (
        "t",
        [[2, 3]],
        "in-progress",
        3,
    )
    assert list(Intent.model_fields) == KEYS


def test_input_is_not_mutated() -> None:
    raw = {"intents": [{"title": " t ", "ranges": [3]}], "constraints": [" c "]}
    before = copy.deepcopy(raw)
    normalized(raw)
    assert raw == before
