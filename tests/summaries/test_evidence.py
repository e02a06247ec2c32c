"""Evidence: each intent records the one row that decided its state (issue 11, item 5).

The heuristic reads real JSONL transcripts written to disk; the payload tests feed
``normalize_payload`` what a model (or a damaged sidecar) could return.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from summaries.core.heuristic import summarize_turns
from summaries.core.payload import EVIDENCE_QUOTE_MAX, normalize_payload
from summaries.core.reply import parse_reply
from tests.summaries.test_heuristic_structure import Row, turns_of, write

EDIT = ("u", "Fix the parser in parse.py so it keeps rows with empty names")
CHANGED = ("a", "I changed parse.py to keep rows with empty names.")


def normalized(raw: object, **caps: int) -> dict[str, Any] | None:
    """``normalize_payload``'s model as the JSON it is stored as (None stays None)."""
    out = normalize_payload(raw, **caps)
    return None if out is None else out.model_dump(mode="json")


def only_intent(tmp_path: Path, rows: list[Row]) -> dict[str, Any]:
    intents = summarize_turns(turns_of(write(tmp_path, rows)))["intents"]
    assert isinstance(intents, list)
    assert len(intents) == 1, intents
    intent: dict[str, Any] = intents[0]
    return intent


def stamp_of(tmp_path: Path, role: str, nth: int = -1) -> str:
    lines = (tmp_path / "session.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    stamp: str = [r["ts"] for r in rows if r.get("role") == role][nth]
    return stamp


def test_a_passing_pytest_run_is_test_passed_with_the_tool_rows_ts(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [
            EDIT,
            CHANGED,
            ("call", "pytest -q tests/test_parse.py", "bash"),
            ("result", "5 passed in 0.12s", "bash", 0),
        ],
    )
    assert (intent["status"], intent["verified"]) == ("completed", True)
    evidence = intent["evidence"]
    assert evidence["kind"] == "test_passed"
    assert evidence["turn"] == 1
    # the tool_result row, not the person's row nor the assistant's
    assert evidence["ts"] == stamp_of(tmp_path, "tool_result")
    assert "passed" in evidence["quote"].lower()


def test_a_failing_run_is_test_failed(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [EDIT, CHANGED, ("call", "pytest -q", "bash"), ("result", "1 failed, 4 passed", "bash", 1)],
    )
    assert intent["verified"] is False
    assert intent["evidence"]["kind"] == "test_failed"
    assert intent["evidence"]["ts"] == stamp_of(tmp_path, "tool_result")


def test_an_unanswered_question_is_pending_decision(tmp_path: Path) -> None:
    ask = "I changed parse.py.\n\nShould empty names become NULL or an empty string?"
    intent = only_intent(tmp_path, [EDIT, ("a", ask)])
    assert intent["status"] == "active"
    evidence = intent["evidence"]
    assert evidence["kind"] == "pending_decision"
    assert evidence["quote"] == "Should empty names become NULL or an empty string?"
    assert evidence["ts"] == stamp_of(tmp_path, "assistant")


def test_a_drop_is_dropped_at_the_persons_row(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [
            ("u", "Add a dark mode toggle to settings.html"),
            ("a", "I added the toggle to settings.html."),
            ("u", "Actually, forget the dark mode toggle, drop it."),
        ],
    )
    assert intent["status"] == "abandoned"
    evidence = intent["evidence"]
    assert evidence == {
        "turn": 2,
        "ts": stamp_of(tmp_path, "user"),
        "kind": "dropped",
        "quote": "Actually, forget the dark mode toggle, drop it.",
    }


def test_the_persons_confirmation_is_user_confirmed(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [
            ("u", "Fix the login redirect in views.py"),
            ("a", "I fixed views.py to redirect to /home after login."),
            ("u", "Works now, thanks!"),
        ],
    )
    assert (intent["status"], intent["verified"]) == ("completed", True)
    assert intent["evidence"]["kind"] == "user_confirmed"
    assert intent["evidence"]["turn"] == 2
    assert intent["evidence"]["ts"] == stamp_of(tmp_path, "user")


def test_merged_without_a_run_is_merged_unverified(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [
            ("u", "Fix the login redirect in views.py"),
            ("a", "I fixed views.py to redirect to /home after login and merged it to main."),
        ],
    )
    assert (intent["status"], intent["verified"]) == ("completed", False)
    assert intent["evidence"]["kind"] == "merged_unverified"


def test_no_run_and_no_confirmation_is_null_evidence(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [
            ("u", "Fix the login redirect in views.py"),
            ("a", "I fixed views.py to redirect to /home after login."),
        ],
    )
    assert intent["verified"] is False
    assert intent["evidence"] is None


# ------------------------------------------------------------------ the payload


def payload(evidence: object) -> dict[str, Any]:
    return {"intents": [{"title": "Fix the parser", "ranges": [[1, 2]], "evidence": evidence}]}


def normalized_evidence(evidence: object) -> Any:
    out = normalized(payload(evidence))
    assert out is not None
    return out["intents"][0]["evidence"]


def test_valid_evidence_survives_normalize() -> None:
    ev = {"turn": 2, "ts": "2026-10-07T09:04:00+00:00", "kind": "test_passed", "quote": "ok"}
    assert normalized_evidence(ev) == ev


def test_an_intent_without_evidence_gets_null() -> None:
    out = normalized({"intents": [{"title": "Fix the parser", "ranges": [[1, 1]]}]})
    assert out is not None
    assert out["intents"][0]["evidence"] is None


def test_invalid_evidence_is_dropped() -> None:
    good = {"turn": 2, "ts": "2026-10-07T09:04:00Z", "kind": "test_passed", "quote": "ok"}
    for bad in (
        "tests passed",
        [good],
        {**good, "kind": "vibes"},
        {**good, "turn": 0},
        {**good, "turn": True},
        {**good, "turn": "2"},
        {**good, "quote": "   "},
        {**good, "quote": 5},
    ):
        assert normalized_evidence(bad) is None, bad
    # a bad ts alone loses only the link, never the reason
    assert normalized_evidence({**good, "ts": 17})["ts"] is None
    assert normalized_evidence({**good, "ts": "x" * 500})["ts"] is None


def test_the_quote_is_cut_at_a_word_and_sealed() -> None:
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    quote = f"Ran the deploy with OPENAI_API_KEY={secret} and " + "everything worked fine " * 10
    ev = normalized_evidence({"turn": 1, "ts": None, "kind": "test_passed", "quote": quote})
    assert secret not in json.dumps(ev)
    assert "REDACTED" in ev["quote"]
    assert len(ev["quote"]) <= EVIDENCE_QUOTE_MAX
    assert quote.startswith(ev["quote"].split("[")[0])
    words = quote.split()
    assert ev["quote"].split()[-1] in words  # no word cut in half


def test_the_heuristics_evidence_passes_the_final_seal(tmp_path: Path) -> None:
    secret = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    rows: list[Row] = [
        ("u", "Fix the login redirect in views.py"),
        ("a", "I fixed views.py to redirect to /home after login."),
        ("u", f"Works now, thanks! token was {secret} btw"),
    ]
    raw = summarize_turns(turns_of(write(tmp_path, rows)))
    out = normalized(raw)
    assert out is not None
    assert out["intents"][0]["evidence"]["kind"] == "user_confirmed"
    assert secret not in json.dumps(out)


def test_a_models_reply_may_carry_evidence_and_bad_evidence_is_dropped() -> None:
    good = {"turn": 2, "ts": None, "kind": "user_confirmed", "quote": "works now"}
    reply = json.dumps(
        {
            "intents": [
                {"title": "Fix login", "ranges": [[1, 2]], "evidence": good},
                {"title": "Add flag", "ranges": [[3, 3]], "evidence": {"kind": "guess"}},
            ],
            "constraints": [],
        }
    )
    out = normalized(parse_reply(f"Here it is:\n```json\n{reply}\n```"))
    assert out is not None
    by_title = {i["title"]: i["evidence"] for i in out["intents"]}
    assert by_title == {"Fix login": good, "Add flag": None}
