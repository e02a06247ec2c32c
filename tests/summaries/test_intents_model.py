"""The payload model (summaries.core.intents): reading sidecars through it, its types."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from summaries.core.intents import (
    Intent,
    ReplyIntent,
    ReplyPayload,
    StoredSummary,
    SummaryChecks,
    SummaryPayload,
    reply_json_schema,
)
from summaries.core.payload import normalize_payload
from summaries.core.sidecar import summary_of

GOOD: dict[str, Any] = {
    "title": "Fix the build",
    "initial_intent": "CI was red",
    "progress": ["tests pass locally"],
    "next_steps": [{"what": "run CI", "why": "never ran", "expect": "green"}],
    "ranges": [[1, 4]],
    "status": "completed",
    "verified": False,
    "origin_turn": 1,
    "state": "needs-you",
    "last_touched_turn": 4,
    "evidence": {"turn": 2, "ts": None, "kind": "merged_unverified", "quote": "merged"},
}


def test_a_sidecar_we_wrote_reads_back_unchanged() -> None:
    stored = {
        "intents": [GOOD],
        "constraints": ["use make test"],
        "generated_at": 1.5,
        "user_turns": 4,
        "last_activity": "2026-01-01T00:00:00+00:00",
        "model": "heuristic",
        "duration_ms": 3,
        "checks": {**SummaryChecks().model_dump(), "titles_cut": 1},
        "incremental_passes": 2,
        "sig": 1,
        "gen": 0,
    }
    summary = summary_of(stored)
    assert summary.model_dump(mode="json") == {
        k: v for k, v in stored.items() if k not in ("sig", "gen")
    }


def test_unknown_fields_of_an_older_writer_are_tolerated() -> None:
    summary = summary_of(
        {"intents": [{**GOOD, "colour": "red"}], "legacy_field": {"x": 1}, "user_turns": 2}
    )
    assert [i.title for i in summary.intents] == ["Fix the build"]
    assert "colour" not in summary.intents[0].model_dump()


def test_an_intent_that_does_not_fit_is_dropped_not_the_summary() -> None:
    bad = [
        {"title": ""},
        {"title": 7},
        {"no": "title"},
        "a string",
        {**GOOD, "status": "weird"},
        {**GOOD, "ranges": [[True, 2]]},  # true is no turn number
        {**GOOD, "verified": "yes"},
        {"title": "t", "ranges": 5},  # no state yet: derived, then the ranges refused
        {"title": "t", "ranges": "1-3"},
    ]
    summary = summary_of({"intents": [*bad, GOOD], "constraints": ["a", 3, None]})
    assert [i.model_dump(mode="json") for i in summary.intents] == [GOOD]
    assert summary.constraints == ["a"]


@pytest.mark.parametrize(
    "evidence",
    [
        {"turn": "x", "kind": "nope"},
        {**GOOD["evidence"], "kind": ["merged_unverified"]},  # a hand-edited sidecar
        {**GOOD["evidence"], "kind": {"a": 1}},
    ],
)
def test_bad_evidence_reads_as_none(evidence: dict[str, Any]) -> None:
    summary = summary_of({"intents": [{**GOOD, "evidence": evidence}]})
    assert summary.intents[0].evidence is None


def test_a_wrongly_typed_envelope_field_reads_as_absent() -> None:
    summary = summary_of({"intents": [GOOD], "user_turns": True, "model": 5, "generated_at": 2})
    assert (summary.user_turns, summary.model, summary.generated_at) == (None, None, 2.0)


def test_a_legacy_intent_gets_its_derived_fields() -> None:
    (intent,) = summary_of(
        {"intents": [{"title": "t", "status": "abandoned", "ranges": [[2, 5], [1, 9]]}]}
    ).intents
    assert (intent.state, intent.last_touched_turn) == ("dropped", 9)


def test_the_model_checks_types_and_never_shapes_text() -> None:
    intent = Intent.model_validate({"title": "  spaced  ", "progress": [" x "]})
    assert (intent.title, intent.progress) == ("  spaced  ", [" x "])
    with pytest.raises(ValidationError):
        Intent.model_validate({"title": "t", "origin_turn": True})
    with pytest.raises(ValidationError):
        Intent.model_validate({"title": "t", "ranges": [[1, 2, 3]]})


def test_the_stored_intent_extends_the_reply_intent() -> None:
    assert set(ReplyIntent.model_fields) < set(Intent.model_fields)
    assert set(Intent.model_fields) - set(ReplyIntent.model_fields) == {
        "state",
        "last_touched_turn",
        "evidence",
    }
    assert set(StoredSummary.model_fields) > set(SummaryPayload.model_fields)


def test_the_reply_schema_is_the_prompts_shape() -> None:
    schema = reply_json_schema()
    assert schema == ReplyPayload.model_json_schema()
    assert set(schema["$defs"]["CitedReplyIntent"]["properties"]) == {
        "cites",
        "title",
        "ranges",
        "status",
        "verified",
        "origin_turn",
        "initial_intent",
        "progress",
        "next_steps",
    }
    # a constraint is its text and the person's turn that said it
    assert set(schema["$defs"]["ReplyConstraint"]["properties"]) == {"text", "cite"}


def test_a_normalized_reply_validates_as_what_a_server_was_asked_for() -> None:
    out = normalize_payload({"intents": [GOOD], "constraints": ["c"]})
    assert out is not None
    ReplyPayload.model_validate(out.model_dump(mode="json"))
