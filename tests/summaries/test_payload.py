"""normalize_payload and derive_state: coercions, ranges, caps, ordering, redaction."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from summaries.core.intents import Intent, SummaryPayload
from summaries.core.payload import (
    STATE_DONE,
    STATE_DROPPED,
    STATE_IN_PROGRESS,
    STATE_NEEDS_YOU,
    derive_state,
    normalize_payload,
)

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


# --- derive_state --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "verified", "state"),
    [
        ("abandoned", True, STATE_DROPPED),
        ("abandoned", False, STATE_DROPPED),
        ("abandoned", None, STATE_DROPPED),
        ("completed", False, STATE_NEEDS_YOU),
        ("completed", True, STATE_DONE),
        ("completed", None, STATE_DONE),
        ("active", True, STATE_IN_PROGRESS),
        ("active", False, STATE_IN_PROGRESS),
        ("active", None, STATE_IN_PROGRESS),
        ("weird", False, STATE_IN_PROGRESS),
        (None, None, STATE_IN_PROGRESS),
        ("completed", 0, STATE_DONE),  # only a real False means "never confirmed"
    ],
)
def test_derive_state(status: object, verified: object, state: str) -> None:
    assert derive_state(status, verified) == state


def test_state_constants() -> None:
    assert (STATE_DONE, STATE_NEEDS_YOU, STATE_IN_PROGRESS, STATE_DROPPED) == (
        "done",
        "needs-you",
        "in-progress",
        "dropped",
    )


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
    }
    assert out is not None
    assert list(out) == ["intents", "constraints"]
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


# --- per-field coercions -------------------------------------------------------------


def test_minimal_intent_defaults() -> None:
    assert one({"title": "t"}) == {
        "title": "t",
        "initial_intent": "",
        "progress": [],
        "next_steps": [],
        "ranges": [],
        "status": "active",
        "verified": None,
        "state": "in-progress",
        "last_touched_turn": 0,
        "origin_turn": None,
        "evidence": None,
    }


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("active", "active"),
        ("completed", "completed"),
        ("abandoned", "abandoned"),
        ("Completed", "active"),
        ("done", "active"),
        (None, "active"),
        (1, "active"),
    ],
)
def test_status(status: object, expected: str) -> None:
    assert one({"title": "t", "status": status})["status"] == expected


@pytest.mark.parametrize(
    ("verified", "expected"),
    [(True, True), (False, False), (None, None), ("false", None), (0, None), (1, None)],
)
def test_verified(verified: object, expected: object) -> None:
    assert one({"title": "t", "verified": verified})["verified"] is expected


@pytest.mark.parametrize(
    ("origin", "expected"),
    [(1, 1), (12, 12), (0, None), (-1, None), ("3", None), (2.0, None), (None, None), (True, None)],
)
def test_origin_turn(origin: object, expected: object) -> None:
    assert one({"title": "t", "origin_turn": origin})["origin_turn"] == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, ""), ("", ""), (0, ""), ("  why  ", "why"), (42, "42"), (["x"], "['x']")],
)
def test_initial_intent(value: object, expected: str) -> None:
    assert one({"title": "t", "initial_intent": value})["initial_intent"] == expected


@pytest.mark.parametrize("progress", [None, "a string", {"a": 1}, 5])
def test_progress_non_list(progress: object) -> None:
    assert one({"title": "t", "progress": progress})["progress"] == []


def test_next_steps_strings_and_objects() -> None:
    steps = one(
        {
            "title": "t",
            "next_steps": [
                "  run the migration ",
                "",
                "   ",
                {"what": " deploy ", "why": None, "expect": 0},
                {"what": "check", "why": " because ", "expect": 200},
                {"what": ""},
                {"what": 5},
                {"why": "no what"},
                7,
                None,
                ["list"],
            ],
        }
    )["next_steps"]
    assert steps == [
        {"what": "run the migration", "why": "", "expect": ""},
        {"what": "deploy", "why": "", "expect": ""},
        {"what": "check", "why": "because", "expect": "200"},
    ]


def test_next_steps_non_list() -> None:
    assert one({"title": "t", "next_steps": "do it"})["next_steps"] == []


@pytest.mark.parametrize(
    ("ranges", "expected"),
    [
        ([[1, 3]], [[1, 3]]),
        ([(2, 2)], [[2, 2]]),
        ([[1, 5], [3, 4]], [[1, 5], [3, 4]]),  # overlap allowed
        ([[4, 6], [1, 2]], [[4, 6], [1, 2]]),  # model order kept
        ([5], [[5, 5]]),  # bare int
        ([0], []),
        ([-2], []),
        ([[0, 3]], []),
        ([[3, 2]], []),
        ([[1, 2, 3]], []),
        ([[1]], []),
        ([["1", "2"]], []),
        ([[1.0, 2.0]], []),
        ([[True, 2]], []),
        ([True], []),
        ([None, "3", {"a": 1}], []),
        ([[1, 2], "x", 7, [9, 8]], [[1, 2], [7, 7]]),
        ("1-3", []),
        (4, []),
        (None, []),
    ],
)
def test_ranges(ranges: object, expected: list[list[int]]) -> None:
    assert one({"title": "t", "ranges": ranges})["ranges"] == expected


def test_last_touched_turn_is_highest_end() -> None:
    assert one({"title": "t", "ranges": [[8, 12], [1, 20], 15]})["last_touched_turn"] == 20


# --- ordering and caps ---------------------------------------------------------------


def test_sorted_by_last_touched_desc_stable() -> None:
    raw = {
        "intents": [
            {"title": "a", "ranges": [[1, 2]]},
            {"title": "b", "ranges": [[3, 9]]},
            {"title": "c"},
            {"title": "d", "ranges": [[1, 2]]},
            {"title": "e", "ranges": [9]},
            {"title": "f"},
        ]
    }
    out = normalized(raw)
    assert out is not None
    assert [i["title"] for i in out["intents"]] == ["b", "e", "a", "d", "c", "f"]


def test_max_intents_drops_oldest_touched(caplog: pytest.LogCaptureFixture) -> None:
    raw = {"intents": [{"title": f"i{n}", "ranges": [n]} for n in range(1, 8)]}
    with caplog.at_level(logging.WARNING, logger="summaries.core.payload"):
        out = normalized(raw, max_intents=3)
    assert out is not None
    assert [i["title"] for i in out["intents"]] == ["i7", "i6", "i5"]
    assert [r.getMessage() for r in caplog.records] == [
        "session summary: dropping 4 of 7 intents at the max_intents rail (3); "
        "they are absent from the stored summary, not collapsed in the panel"
    ]
    assert caplog.records[0].levelno == logging.WARNING


def test_at_the_intent_cap_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    raw = {"intents": [{"title": f"i{n}"} for n in range(3)]}
    with caplog.at_level(logging.WARNING):
        out = normalized(raw, max_intents=3)
    assert out is not None
    assert len(out["intents"]) == 3
    assert caplog.records == []


def test_constraints(caplog: pytest.LogCaptureFixture) -> None:
    raw = {"intents": [{"title": "t"}], "constraints": [" a ", "", 3, None, "b", "c", "d"]}
    with caplog.at_level(logging.WARNING, logger="summaries.core.payload"):
        out = normalized(raw, max_constraints=2)
    assert out is not None
    assert out["constraints"] == ["a", "b"]  # model order, not sorted
    assert [r.getMessage() for r in caplog.records] == [
        "session summary: dropping 2 of 4 project notes at the max_constraints rail (2)"
    ]


def test_max_constraints_zero_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    raw = {"intents": [{"title": "t"}], "constraints": ["a", "b"]}
    with caplog.at_level(logging.DEBUG):
        out = normalized(raw, max_constraints=0)
    assert out is not None
    assert out["constraints"] == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("constraints", [None, "use make", {"a": "b"}, 5])
def test_constraints_non_list(constraints: object) -> None:
    out = normalized({"intents": [{"title": "t"}], "constraints": constraints})
    assert out is not None
    assert out["constraints"] == []


def test_default_caps_are_fifty() -> None:
    raw = {
        "intents": [{"title": f"i{n}"} for n in range(60)],
        "constraints": [f"c{n}" for n in range(60)],
    }
    out = normalized(raw)
    assert out is not None
    assert (len(out["intents"]), len(out["constraints"])) == (50, 50)


# --- redaction -----------------------------------------------------------------------


def test_every_nested_string_is_redacted() -> None:
    token = "ghp_" + "A" * 36  # built at runtime so no scanner flags this file
    raw = {
        "intents": [
            {
                "title": f"rotate {token}",
                "initial_intent": f"leaked {token} in chat",
                "progress": [f"old token {token} revoked"],
                "next_steps": [
                    {"what": f"check {token}", "why": token, "expect": f"x{token} "},
                    f"string step {token}",
                ],
            }
        ],
        "constraints": [f"never paste {token}"],
    }
    out = normalized(raw)
    assert out is not None
    assert token not in repr(out)
    assert out["intents"][0]["ranges"] == []  # non-strings untouched


def test_returns_what_the_redactor_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    # Independent of the real patterns: the whole payload goes through the recursive
    # redactor, and its output (not the input) is what comes back.
    import summaries.core.payload as payload_mod

    seen: list[Any] = []

    def fake(value: Any) -> tuple[Any, dict[str, int]]:
        seen.append(copy.deepcopy(value))

        def walk(v: Any) -> Any:
            if isinstance(v, str):
                return v.replace("secret", "[REDACTED]")
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            if isinstance(v, list):
                return [walk(x) for x in v]
            return v

        return walk(value), {"fake": 1}

    monkeypatch.setattr(payload_mod, "redact_payload", fake)
    out = normalized(
        {"intents": [{"title": "a secret", "next_steps": ["secret step"]}], "constraints": ["s"]}
    )
    assert out is not None
    assert out["intents"][0]["title"] == "a [REDACTED]"
    assert out["intents"][0]["next_steps"][0]["what"] == "[REDACTED] step"
    assert seen[0]["intents"][0]["title"] == "a secret"
    assert list(seen[0]) == ["intents", "constraints"]
