"""normalize_payload: per-field coercions of a model's intent (status, verified, turns,
progress, next steps, ranges)."""

from __future__ import annotations

import pytest

from tests.summaries.payload_helpers import one

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
