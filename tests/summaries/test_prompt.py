"""The prompt is the instructions followed by the bounded rendering of the turns."""

from __future__ import annotations

from summaries.core.extract import MAX_INPUT_CHARS, extract_turns, render_bounded_input
from summaries.core.prompt import PROMPT, build_prompt


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
