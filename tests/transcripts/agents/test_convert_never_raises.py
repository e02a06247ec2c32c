"""Format detection and the converters never raise on a JSON value: any field of a real
record's shape, replaced by a value of another JSON type, is detected as some format or none,
becomes a bucket or a row, and the records after it convert.

One raise would stop ``import_transcripts`` at that file (the hostile-folder rule: one
record never stalls a source). The records below are each format's shapes; every field path
of each is set, in turn, to every value of ``ODD``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.fixtures.odd_json import ODD_VALUES, field_paths, replaced
from transcripts.core.agents import claude_code, codex
from transcripts.core.agents.common import ConvState, Step
from transcripts.core.agents.source import detect_lines

ODD = [*ODD_VALUES, [{"type": "text"}]]  # a content list whose block lacks its text

CLAUDE = [
    {
        "type": "user",
        "timestamp": "2026-11-30T10:00:00Z",
        "sessionId": "s",
        "cwd": "/x",
        "gitBranch": "main",
        "message": {"role": "user", "content": "hello"},
    },
    {"type": "user", "timestamp": "t", "isCompactSummary": True, "message": {"content": "sum"}},
    {
        "type": "user",
        "timestamp": "t",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": [{"type": "text", "text": "Exit code 1"}],
                    "is_error": True,
                }
            ],
        },
        "toolUseResult": {"interrupted": False},
    },
    {
        "type": "assistant",
        "timestamp": "t",
        "message": {
            "id": "m1",
            "model": "x",
            "stop_reason": "end_turn",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls"}},
                {"type": "thinking", "thinking": "x"},
            ],
        },
    },
    {
        "type": "assistant",
        "timestamp": "t",
        "isApiErrorMessage": True,
        "message": {"model": "<synthetic>", "content": [{"type": "text", "text": "err"}]},
    },
    {"type": "system", "timestamp": "t", "subtype": "compact_boundary", "content": "c"},
    {"type": "system", "timestamp": "t", "subtype": "turn_duration"},
    {"type": "summary", "summary": "t", "leafUuid": "u"},
]


def _item(payload: dict[str, Any], kind: str = "response_item") -> dict[str, Any]:
    return {"timestamp": "t", "type": kind, "payload": payload}


CODEX = [
    _item({"id": "i", "cwd": "/x", "git": {"branch": "b", "commit_hash": "c"}}, "session_meta"),
    _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}),
    _item(
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "c1",
            "arguments": '{"command": ["bash", "-lc", "ls"]}',
        }
    ),
    _item(
        {
            "type": "function_call",
            "name": "apply_patch",
            "call_id": "c2",
            "arguments": '{"input": "*** Begin Patch\\n*** Update File: a.py\\n"}',
        }
    ),
    _item(
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": '{"output": "x", "metadata": {"exit_code": 1}}',
        }
    ),
    _item({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c3", "input": "*"}),
    _item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "x"}]}),
    _item({"type": "user_message", "message": "go"}, "event_msg"),
    _item({"type": "agent_message", "message": "ok"}, "event_msg"),
    _item({"type": "task_complete", "last_agent_message": "ok"}, "event_msg"),
    _item({"type": "exec_command_end", "call_id": "c1", "exit_code": 1}, "event_msg"),
    _item({"message": "sum"}, "compacted"),
    _item({"cwd": "/x", "model": "m"}, "turn_context"),
]


@pytest.mark.parametrize(
    ("convert", "records"), [(claude_code.convert, CLAUDE), (codex.convert, CODEX)]
)
def test_no_field_of_another_json_type_makes_a_converter_raise(
    convert: Callable[[Any, ConvState], Step], records: list[dict[str, Any]]
) -> None:
    raised = []
    for record in records:
        for path in field_paths(record):
            for value in ODD:
                state = ConvState()
                try:
                    for before in records[:4]:
                        convert(copy.deepcopy(before), state)
                    convert(replaced(record, path, value), state)
                    for after in records:  # the records after it still convert
                        convert(copy.deepcopy(after), state)
                except Exception as exc:  # every raise is the finding
                    raised.append(f"{record.get('type')} {path} = {value!r}: {exc!r}")
    assert not raised, f"{len(raised)} raises, e.g. {raised[:3]}"


@pytest.mark.parametrize("records", [CLAUDE, CODEX])
def test_no_field_of_another_json_type_makes_format_detection_raise(
    records: list[dict[str, Any]],
) -> None:
    raised = []
    for record in records:
        for path in field_paths(record):
            for value in ODD:
                head = json.dumps(replaced(record, path, value)).encode()
                for lines in (
                    [head],
                    [head, head],
                    [head, *map(str.encode, map(json.dumps, records))],
                ):
                    try:
                        detect_lines(lines)
                    except Exception as exc:  # every raise is the finding
                        raised.append(f"{record.get('type')} {path} = {value!r}: {exc!r}")
    assert not raised, f"{len(raised)} raises, e.g. {raised[:3]}"
