"""The prompt names every trap and boundary signal; trimming one fails here."""

from __future__ import annotations

import pytest

from summaries.core.extract import MAX_INPUT_CHARS, extract_turns, render_bounded_input
from summaries.core.prompt import PROMPT, build_prompt

CASE_INSENSITIVE = [
    # traps
    "automation, not the user",
    "resend",
    "RETRACT",
    "DECLINED",
    "merged is not work being verified",
    "not a work order",
    "stale",
    "compaction",
    "title",
    # boundary signals
    "commit",
    "merge",
    "timestamp",
    "correction",
]
EXACT = ["RUNBOOK", "inferences", '"verified"', "independent of status"]


@pytest.mark.parametrize("phrase", CASE_INSENSITIVE)
def test_prompt_names_phrase(phrase: str) -> None:
    assert phrase.lower() in PROMPT.lower()


@pytest.mark.parametrize("phrase", EXACT)
def test_prompt_names_exact_phrase(phrase: str) -> None:
    assert phrase in PROMPT


def test_prompt_gives_the_json_shape_and_field_rules() -> None:
    for fragment in [
        "Return ONLY a JSON object",
        '"intents"',
        '"ranges": [[first_user_turn, last_user_turn]]',
        '"status": "active" | "completed" | "abandoned"',
        '"verified": true | false | null',
        '"origin_turn"',
        '"initial_intent"',
        '"progress"',
        '"next_steps": [{"what": "...", "why": "...", "expect": "..."}]',
        '"constraints"',
        "FIELD RULES",
        "BOUNDARY SIGNALS, most reliable first",
        "TRAPS",
        "INTENT",
        "USER turn",
    ]:
        assert fragment in PROMPT, fragment


def test_prompt_ranks_boundary_signals() -> None:
    block = PROMPT[PROMPT.index("BOUNDARY SIGNALS") : PROMPT.index("TRAPS")]
    assert block.index("commit") < block.index("Timestamps") < block.index("correction")
    assert "highest-value signal per character" in block
    assert "never summarize away a correction" in block.lower()


def test_prompt_ends_with_transcript_heading() -> None:
    assert PROMPT.endswith("TRANSCRIPT\n\n")


def test_build_prompt_appends_bounded_rendering() -> None:
    records = [{"role": "user", "content": "fix the build"}, {"role": "assistant", "content": "ok"}]
    turns = extract_turns(records)
    assert build_prompt(turns) == PROMPT + "USER (turn 1)\nfix the build\n\nASSISTANT\nok"


def test_build_prompt_is_bounded() -> None:
    records = []
    for i in range(300):
        records.append({"role": "user", "content": f"request {i} " + "r" * 400})
        records.append({"role": "assistant", "content": "a" * 800})
    turns = extract_turns(records)
    prompt = build_prompt(turns)
    assert prompt == PROMPT + render_bounded_input(turns)
    assert len(prompt) <= len(PROMPT) + MAX_INPUT_CHARS
    assert "omitted ...]" in prompt
