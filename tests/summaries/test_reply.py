"""parse_reply: tolerant of wrapping, strict about ambiguity, never raises; shape_reply never
raises on a reply whose fields have the wrong JSON types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from summaries.core.extract import extract_turns
from summaries.core.reply import parse_reply, shape_reply
from tests.fixtures.odd_json import ODD_VALUES, field_paths, replaced

PAYLOAD = {"intents": [{"title": "Fix the build", "ranges": [[1, 3]]}], "constraints": []}
OTHER = {"intents": [{"title": "Something else", "ranges": [[4, 4]]}]}
TEXT = json.dumps(PAYLOAD)


@pytest.mark.parametrize(
    "reply",
    [
        TEXT,
        f"```json\n{TEXT}\n```",
        f"```\n{TEXT}\n```",
        f"Here is the summary:\n\n{TEXT}\n\nLet me know if you need more.",
        f"Sure! I'll fill in the {{placeholder}} fields.\n```json\n{TEXT}\n```",
        f"{{placeholder}} {{ broken: json }} [not, json] {TEXT}",
        f"[1] see footnote. {TEXT}",
        f'{{"note": "preamble object"}}\n{TEXT}',
        f"[{TEXT}]",
        f'{{"result": {TEXT}}}',
        json.dumps(PAYLOAD, indent=2),
    ],
)
def test_finds_the_payload(reply: str) -> None:
    assert parse_reply(reply) == PAYLOAD


def test_same_payload_twice_is_that_payload() -> None:
    assert parse_reply(f"{TEXT}\n\nAgain, for clarity:\n```json\n{TEXT}\n```") == PAYLOAD


def test_two_different_payloads_refused() -> None:
    assert parse_reply(f"{TEXT}\nActually, better:\n{json.dumps(OTHER)}") is None


def test_nested_intent_dicts_are_not_second_payloads() -> None:
    payload = {
        "intents": [
            {"title": "a", "next_steps": [{"what": "x"}]},
            {"title": "b", "meta": {"intents": ["looks like a payload"]}},
        ]
    }
    assert parse_reply("ok " + json.dumps(payload)) == payload


def test_prefers_dict_with_intents_list() -> None:
    reply = f'{{"intents": "not a list"}} {TEXT}'
    assert parse_reply(reply) == PAYLOAD


def test_without_payload_the_first_object_is_returned() -> None:
    # normalize_payload rejects it later; the parser only finds JSON.
    assert parse_reply('text {"summary": "x"} more {"y": 1}') == {"summary": "x"}


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n\t",
        "I could not summarize this session.",
        "{placeholder}",
        "[1, 2, 3]",
        '"just a string"',
        "{" * 100_000,
        "[" * 100_000,
        "[{" * 50_000,
        '{"intents": [' * 3000,
        '```json\n{"intents": [{"title": "unterminated"\n```',
        None,
        42,
        b"{}",
    ],
)
def test_garbage_is_none(reply: object) -> None:
    assert parse_reply(reply) is None


def test_deeply_nested_but_valid_payload_never_raises() -> None:
    deep = "[" * 50_000 + "]" * 50_000
    reply = f'{{"intents": [], "x": {deep}}} {TEXT}'
    assert parse_reply(reply) == PAYLOAD


def test_payload_after_deep_bracket_run() -> None:
    assert parse_reply("[" * 5000 + TEXT + "]" * 5000) == PAYLOAD


# A lying model: any field of a full reply (an incremental one too) set to a value of another
# JSON type is dropped or coerced by the checks and the shaping; the pass never raises on it.
FULL_REPLY: dict[str, Any] = {
    "intents": [
        {
            "title": "Fix the parser",
            "initial_intent": "it crashed",
            "progress": ["guarded None"],
            "next_steps": [{"what": "release", "why": "users wait", "expect": "a tag"}],
            "ranges": [[1, 2]],
            "status": "completed",
            "verified": True,
            "origin_turn": 1,
            "cites": ["U1", "F1.2"],
        },
        {
            "id": 1,  # an incremental reply's change: its fields replace the previous intent's
            "evidence": {"turn": 2, "ts": "t04", "kind": "person_confirmed", "quote": "great"},
        },
    ],
    "constraints": [{"text": "use uv run for everything", "cite": "U1"}, "use uv run"],
}
ROWS: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the parser crash, use uv run for everything", "ts": "t01"},
    {"role": "tool_call", "content": "src/parse.py: guard None", "meta": {"tool": "edit"}},
    {"role": "tool_result", "content": "ok", "ts": "t02", "meta": {"tool": "edit", "exit_code": 0}},
    {"role": "assistant", "content": "Fixed.", "ts": "t03"},
    {"role": "user", "content": "great, that works", "ts": "t04"},
]


@pytest.mark.parametrize("incremental", [False, True])
def test_no_field_of_another_json_type_makes_shaping_a_reply_raise(incremental: bool) -> None:
    turns = extract_turns(ROWS)
    previous = None
    if incremental:
        first = {**FULL_REPLY, "intents": FULL_REPLY["intents"][:1]}
        previous = shape_reply(json.dumps(first), turns).payload
        assert previous is not None
    raised = []
    for path in field_paths(FULL_REPLY):
        for value in ODD_VALUES:
            try:
                shape_reply(json.dumps(replaced(FULL_REPLY, path, value)), turns, previous=previous)
            except Exception as exc:  # every raise is the finding
                raised.append(f"{path} = {value!r}: {exc!r}")
    assert not raised, f"{len(raised)} raises, e.g. {raised[:3]}"
