"""normalize_payload: intent ordering, the intent and constraint caps, and redaction of
every nested string."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from tests.summaries.payload_helpers import normalized

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
