"""The Claude converter's fused path answers exactly as its general path.

``claude_code.convert`` takes the common records (a main-thread ``user`` / ``assistant``
record with a dict message and blocks of known shapes) on a fused path and leaves every
other record to ``_convert_general``. Both must give the same step (rows, bucket, turn
end) and leave the same state, record after record: on the fixtures, on the bench's
generated sessions, on each shape the fused path declines, and on random records.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.transcripts.agents.helpers import CLAUDE_AGENT, CLAUDE_FILE, DATA
from transcripts.core.agents import claude_code
from transcripts.core.agents.common import Step

TS = "2026-03-27T11:11:15.533Z"


def _outcome(step: Step) -> tuple[bytes, str, bool]:
    return orjson.dumps(step.rows), step.bucket, step.turn_end


def assert_same(records: list[Any], *, sidechain: bool = False) -> None:
    """Both paths over the same records, each with its own state: same steps, same state."""
    fast = claude_code.new_state(sidechain=sidechain)
    general = copy.deepcopy(fast)
    for number, record in enumerate(records, 1):
        mine = claude_code.convert(copy.deepcopy(record), fast)
        theirs = claude_code._convert_general(copy.deepcopy(record), general)
        assert _outcome(mine) == _outcome(theirs), f"record {number}: {record!r}"
        assert orjson.dumps(fast) == orjson.dumps(general), f"state after record {number}"


@pytest.mark.parametrize("path", [CLAUDE_FILE, CLAUDE_AGENT])
def test_the_fixtures_convert_the_same(path: str) -> None:
    records = [orjson.loads(line) for line in (DATA / path).read_bytes().splitlines()]
    assert_same(records, sidechain=Path(path).name.startswith("agent-"))


def test_the_bench_sessions_convert_the_same(tmp_path: Path) -> None:
    from bench.bench_agent_import import build_session

    rng = random.Random(7)
    for n in range(3):
        path = tmp_path / f"s{n}.jsonl"
        build_session(path, rng, 60_000)
        assert_same([orjson.loads(line) for line in path.read_bytes().splitlines()])


def _assistant(content: Any, **extra: Any) -> dict[str, Any]:
    message = {"id": extra.pop("mid", "msg_1"), "role": "assistant", "content": content}
    message |= extra.pop("message", {})
    return {"type": "assistant", "sessionId": "s", "timestamp": TS, "message": message} | extra


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "content": content}
    return {"type": "user", "sessionId": "s", "timestamp": TS, "message": message} | extra


TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\nb"}

# Each shape the fused path declines (the general path decides it), between records it takes.
DECLINED = [
    _assistant("a plain string reply"),
    _assistant([{"type": "text", "text": "x"}], isApiErrorMessage=True),
    _assistant([{"type": "text", "text": "x"}], message={"model": "<synthetic>"}),
    _assistant([{"type": "text", "text": "x"}], isSidechain=True),
    _assistant([{"type": "image", "source": {}}, {"type": "text", "text": "after"}]),
    _assistant(["not a block", {"type": "text", "text": "x"}]),
    _assistant([{"type": "text", "text": 5}]),
    _assistant([{"type": "tool_use", "id": 7, "name": "Bash", "input": {}}]),
    _assistant([{"type": "tool_use", "id": "toolu_9", "name": None, "input": "x"}]),
    _assistant([{"type": "text", "text": "x"}], payload={"x": 1}),
    _assistant(None),
    {"type": "assistant", "sessionId": "s", "message": 0},
    {"type": "assistant", "sessionId": "s"},
    _user("<command-name>/clear</command-name>"),
    _user("   "),
    _user("a prompt", isMeta=True),
    _user("the summary", isCompactSummary=True),
    _user("a prompt", isSidechain=True),
    _user([{"type": "text", "text": "prompt"}, RESULT]),
    _user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text"}]}]),
    _user([{"type": "tool_result", "tool_use_id": None, "content": "x"}]),
    _user([]),
    _user(None),
    {"type": "user", "sessionId": "s", "message": []},
]

# What it takes, in the shapes that matter for meta and turn ends.
TAKEN = [
    _user("a prompt\x00 with a NUL"),
    _assistant([{"type": "thinking", "thinking": "hm", "signature": "s"}, TOOL_USE]),
    _user([RESULT], toolUseResult={"stdout": "a", "interrupted": False}),
    _assistant([TOOL_USE]),  # the same block again: a duplicate
    _assistant([TOOL_USE | {"id": "toolu_2", "name": "Edit", "input": {"file_path": "a"}}]),
    _user([{"type": "tool_result", "tool_use_id": "toolu_2", "content": "Exit code 3\nno"}]),
    _assistant([TOOL_USE | {"id": "toolu_3"}], mid="msg_2"),
    _user(
        [RESULT | {"tool_use_id": "toolu_3", "is_error": True, "content": "Exit code: 2"}],
        toolUseResult="Error: failed",
    ),
    _assistant([TOOL_USE | {"id": "toolu_4"}], mid="msg_3"),
    _user([RESULT | {"tool_use_id": "toolu_4"}], toolUseResult={"interrupted": True}),
    _user([RESULT | {"tool_use_id": "unknown"}]),
    _assistant([{"type": "text", "text": "  "}], mid="msg_4", message={"stop_reason": "end_turn"}),
    _assistant(
        [{"type": "text", "text": "done"}], mid="msg_5", message={"stop_reason": "end_turn"}
    ),
    _user("the next prompt", timestamp=None),
    _assistant([{"type": "text", "text": "open"}], mid="msg_6", timestamp={"odd": 1}),
    _user("a prompt that closes the open turn", timestamp=12),
    _assistant([], mid="msg_7"),
    _assistant([{"type": "redacted_thinking", "data": "x"}], mid="msg_8"),
]


def test_each_declined_shape_converts_the_same_between_taken_ones() -> None:
    records: list[Any] = []
    for declined in DECLINED:
        records += [*TAKEN[:4], declined, *TAKEN[4:]]
    assert_same(records)


def test_the_declined_shapes_reach_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    general = claude_code._convert_general
    seen: list[Any] = []

    def spy(rec: Any, state: dict[str, Any]) -> Step:
        seen.append(rec)
        return general(rec, state)

    monkeypatch.setattr(claude_code, "_convert_general", spy)
    state = claude_code.new_state()
    for record in TAKEN:
        claude_code.convert(copy.deepcopy(record), state)
    assert seen == []  # every taken record took the fused path
    for record in DECLINED:
        claude_code.convert(copy.deepcopy(record), state)
    assert len(seen) == len(DECLINED)


TEXT = st.sampled_from(["", " ", "hi", "<system-reminder>x", "Exit code 4", "a\x00b", "end"])
SCALAR = st.one_of(TEXT, st.none(), st.booleans(), st.integers(-3, 3))
IDS = st.sampled_from(["toolu_1", "toolu_2", "msg_1", "msg_2"])
BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(TEXT, SCALAR)}),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_use"),
            "id": st.one_of(IDS, SCALAR),
            "name": st.one_of(st.sampled_from(["Bash", "Edit", "Read", ""]), SCALAR),
            "input": st.one_of(
                st.fixed_dictionaries({"command": TEXT}),
                st.fixed_dictionaries({"file_path": TEXT}),
                SCALAR,
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_result"),
            "tool_use_id": st.one_of(IDS, SCALAR),
            "content": st.one_of(TEXT, st.lists(st.fixed_dictionaries({"type": st.just("text")}))),
        },
        optional={"is_error": SCALAR},
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["thinking", "redacted_thinking", "image"])}),
    SCALAR,
)
MESSAGE = st.fixed_dictionaries(
    {"content": st.one_of(TEXT, st.lists(BLOCK, max_size=3), SCALAR)},
    optional={
        "id": st.one_of(IDS, SCALAR),
        "stop_reason": st.sampled_from(["end_turn", "tool_use", None]),
        "model": st.sampled_from(["claude", "<synthetic>"]),
    },
)
RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system"])},
    optional={
        "message": st.one_of(MESSAGE, SCALAR),
        "timestamp": st.one_of(st.just(TS), SCALAR),
        "sessionId": st.just("s"),
        "isSidechain": st.booleans(),
        "isMeta": st.booleans(),
        "isCompactSummary": st.booleans(),
        "isApiErrorMessage": st.booleans(),
        "toolUseResult": st.one_of(st.fixed_dictionaries({"interrupted": SCALAR}), SCALAR),
        "subtype": st.sampled_from(["turn_duration", "compact_boundary"]),
        "payload": st.just({}),
    },
)


def _converts_at_all(record: dict[str, Any]) -> bool:
    """The general path raises on a truthy non-dict message (as it always has): skip those."""
    try:
        claude_code._convert_general(copy.deepcopy(record), claude_code.new_state())
    except AttributeError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.lists(RECORD, max_size=8))
def test_random_records_convert_the_same(records: list[dict[str, Any]]) -> None:
    assert_same([record for record in records if _converts_at_all(record)])
