"""The pure converters on the fixtures: every record accounted for, turns hand-counted.

Claude fixture (30 lines): 3 genuine prompts (lines 4, 15, 24); a caveat (isMeta), a slash
command, a compact summary and a system reminder are not prompts. Clean turn ends: line
13 (end_turn), line 19 (turn_duration after a reply with stop_reason null), line 25
(end_turn); the repeated snapshot of line 25 (line 29) ends nothing.
Codex fixture (33 lines): 3 prompts (lines 8, 22, 30; line 4 is environment context).
Clean ends: task_complete (line 20), the next prompt after the reply (line 30); the third
turn was aborted (line 32), so it never reaches the summary pass.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.transcripts.agents.helpers import (
    CLAUDE_AGENT,
    CLAUDE_FILE,
    CLAUDE_TALLY,
    CODEX_FILE,
    CODEX_TALLY,
    DATA,
)
from transcripts.core.agents import claude_code, codex
from transcripts.core.agents.common import ConvState, Step, Tally
from transcripts.core.agents.source import detect_lines, head_lines, head_lines_of, session_title
from transcripts.core.user_turns import is_user_turn


def run(path: str, convert, state) -> tuple[list[dict[str, Any]], Tally, list[int], int]:
    rows, tally, ends = [], Tally(), []
    lines = (DATA / path).read_bytes().splitlines()
    for number, line in enumerate(lines, 1):
        step: Step = convert(orjson.loads(line), state)
        tally[step.bucket] += 1
        rows.extend(step.rows)
        if step.turn_end:
            ends.append(number)
    return rows, tally, ends, len(lines)


def test_claude_every_record_accounted_for_and_turns_match_hand_count() -> None:
    state = ConvState()
    rows, tally, ends, total = run(CLAUDE_FILE, claude_code.convert, state)
    assert dict(tally) == CLAUDE_TALLY
    assert tally.total() == total == 30
    assert sum(1 for r in rows if is_user_turn(r)) == 3
    assert ends == [13, 19, 25]
    roles = [r["role"] for r in rows]
    assert roles.count("tool_call") == 4
    assert roles.count("tool_result") == 4
    assert state.prov["cwd"] == "/home/ann/src/dateparse"
    assert state.prov["git_branch"] == "fix/dates"


def test_claude_tool_rows_follow_the_convention() -> None:
    rows, *_ = run(CLAUDE_FILE, claude_code.convert, ConvState())
    calls = [r for r in rows if r["role"] == "tool_call"]
    results = [r for r in rows if r["role"] == "tool_result"]
    assert calls[0]["content"] == "pytest -q tests/test_dates.py"
    assert calls[0]["meta"] == {
        "tool": "Bash",
        "call_id": "toolu_01",
        "source_ts": "2026-11-30T10:07:00.000Z",
    }
    assert calls[1]["content"] == "Edit /home/ann/src/dateparse/src/dates.py"
    failed, edited, passed, committed = (r["meta"] for r in results)
    assert (failed["exit_code"], failed["is_error"], failed["tool"]) == (1, True, "Bash")
    assert (edited["is_error"], "exit_code" in edited) == (False, False)  # not a shell: no code
    assert (passed["exit_code"], committed["exit_code"]) == (0, 0)
    notices = [r for r in rows if r["role"] == "notice"]
    assert {n["meta"]["kind"] for n in notices} >= {"command", "compact_summary", "summary"}


def test_claude_subagent_file_is_its_own_thread() -> None:
    state = ConvState(sidechain=True)
    _rows, tally, ends, total = run(CLAUDE_AGENT, claude_code.convert, state)
    assert tally == Tally({"imported": 4})
    assert total == 4
    assert ends == [4]
    assert state.prov["agent_id"] == "a1b2c3"


def test_codex_every_record_accounted_for_and_turns_match_hand_count() -> None:
    state = ConvState()
    rows, tally, ends, total = run(CODEX_FILE, codex.convert, state)
    assert dict(tally) == CODEX_TALLY
    assert tally.total() == total == 33
    assert sum(1 for r in rows if is_user_turn(r)) == 3
    assert ends == [20, 30]
    prov = state.prov
    assert (prov["cwd"], prov["git_branch"]) == ("/home/ann/src/tinycli", "main")
    calls = [r for r in rows if r["role"] == "tool_call"]
    results = [r["meta"] for r in rows if r["role"] == "tool_result"]
    assert next(c["content"] for c in calls) == "cargo test"
    assert calls[3]["content"] == "git commit -am 'Add --verbose' && git push"
    assert [(m["tool"], m.get("exit_code"), m["is_error"]) for m in results] == [
        ("shell", 101, True),
        ("apply_patch", None, False),
        ("shell_command", 0, False),
        ("exec_command", 0, False),
    ]
    assert rows[0]["role"] == "notice"  # the environment context, never a prompt


def test_detect_reads_the_first_lines() -> None:
    def head(path: str) -> list[bytes]:
        return (DATA / path).read_bytes().splitlines()[:20]

    assert detect_lines(head(CLAUDE_FILE)) == "claude-code"
    assert detect_lines(head(CODEX_FILE)) == "codex"
    assert detect_lines([b'{"_type": "metadata", "title": "x"}']) == "kirocrew"
    assert detect_lines([b'{"id": "x", "timestamp": "2025-01-01", "instructions": ""}']) == (
        "codex-legacy"
    )
    assert detect_lines([b"not json", b"[1, 2]"]) is None
    snapshot_only = [b'{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}']
    assert detect_lines(snapshot_only) == "claude-code"


def test_a_line_of_the_other_format_is_foreign_not_a_crash() -> None:
    codex_line = orjson.loads((DATA / CODEX_FILE).read_bytes().splitlines()[7])
    claude_line = orjson.loads((DATA / CLAUDE_FILE).read_bytes().splitlines()[3])
    assert claude_code.convert(codex_line, ConvState()).bucket == "foreign:event_msg"
    assert codex.convert(claude_line, ConvState()).bucket == "foreign:user"
    junk: object
    for junk in (None, 3, "x", [], {"type": None}):
        claude_code.convert(junk, ConvState())
        codex.convert(junk, ConvState())


@pytest.mark.parametrize("seed", range(40))
def test_head_of_bytes_read_once_is_the_head_read_from_the_file(tmp_path: Path, seed: int) -> None:
    """Format detection reads the same head whether the file's bytes were read whole
    (``head_lines_of``, which splits only the head) or line by line from its fd."""
    rng = random.Random(seed)
    parts = [
        rng.choice([b"", b"  ", b'{"type":"user"}', b"x" * rng.randrange(1, 50)])
        for _ in range(rng.randrange(0, 40))
    ]
    data = b"\n".join(parts) + rng.choice([b"", b"\n", b'\n{"torn'])
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert head_lines_of(data) == head_lines(fd, len(data))
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    ("prompt", "title"),
    [
        ("Fix the ISO week parser", "Fix the ISO week parser"),
        ("word " * 30, "word " * 14 + "word…"),  # cut at a word, marked
        ("x" * 100, "x" * 79 + "…"),  # no word ends late enough: cut, still marked
        ("  spread\n over\tlines  ", "spread over lines"),
    ],
)
def test_an_imported_sessions_title_is_its_first_prompt_never_cut_unmarked(
    prompt: str, title: str
) -> None:
    got = session_title(
        [{"role": "assistant", "content": "hi"}, {"role": "user", "content": prompt}], {}
    )
    assert got == title.strip()
    assert len(got) <= 80
