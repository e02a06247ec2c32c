"""How a summary pass ends is an enum, and the POST maps every member through one table.

The pass (and the gate it asks) builds every PassOutcome from a PassResult member; the
API answers each non-ok member with its row of ``summaries.api.REFUSALS``; a member
without a row, or a row for no member, fails here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from summaries import api as summaries_api
from summaries.core.gate import PassOutcome, PassResult
from transcripts.models import Slot

from .conftest import Persona, error_of

ROOT = Path(__file__).resolve().parents[2]
URL = "/api/chat/slots/s1/summary"
REFUSED = [r for r in PassResult if not r.ok]
# The codes the panel explains (static/js/panel.js REFUSALS): every row answers one.
PANEL_CODES = {"summary_in_flight", "summary_turn_running", "summary_unavailable"}
PANEL_CODES |= {"summary_disabled", "summary_busy", "summary_too_few_turns"}
# The model's failures, which the panel shows in the server's words.
PANEL_CODES |= {"summary_model_failed", "summary_bad_reply", "summary_backing_off"}


def _built_results(path: Path) -> set[str]:
    """The PassResult members named in ``PassOutcome(...)`` calls of one module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "PassOutcome"):
            continue
        first = node.args[0] if node.args else None
        assert isinstance(first, ast.Attribute), f"{path.name}:{node.lineno}: not an enum member"
        assert isinstance(first.value, ast.Name), f"{path.name}:{node.lineno}"
        assert first.value.id == "PassResult", f"{path.name}:{node.lineno}"
        found.add(first.attr)
    return found


def test_every_outcome_the_pass_builds_is_a_member_and_every_member_is_built() -> None:
    built = _built_results(ROOT / "summaries" / "services.py")
    built |= _built_results(ROOT / "summaries" / "core" / "gate.py")
    assert built <= {r.name for r in PassResult}  # a typo would be an AttributeError anyway
    assert built == {r.name for r in PassResult}  # no member the pass can never produce


def test_every_refusal_has_exactly_one_row() -> None:
    assert set(summaries_api.REFUSALS) == set(REFUSED)
    for result, (status, code, message) in summaries_api.REFUSALS.items():
        assert status == 409, result
        assert code in PANEL_CODES, result
        assert message, result


@pytest.mark.parametrize("result", REFUSED, ids=lambda r: r.name)
def test_the_post_answers_each_refusal_from_its_row(
    owner: Persona,
    make_slot: Callable[..., Slot],
    monkeypatch: pytest.MonkeyPatch,
    result: PassResult,
) -> None:
    make_slot("s1", app=owner.app, turns=3)
    asked: list[tuple[str, bool]] = []

    def the_pass(*, slot_name: str, force: bool = False) -> PassOutcome:
        asked.append((slot_name, force))
        return PassOutcome(result, "detail")

    monkeypatch.setattr(summaries_api, "summary_generate", the_pass)
    response = owner.call("POST", URL)
    status, code, message = summaries_api.REFUSALS[result]
    assert response.status_code == status
    assert error_of(response) == {"error": message, "code": code}
    assert asked == [("s1", True)]  # asked once, forced, with no gate checked before it


@pytest.mark.parametrize(
    ("detail", "words"),
    [
        ("BackendTimeout", "did not answer in time"),
        ("BackendUnavailable", "could not be reached"),
        ("BackendContextOverflow", "context window"),
        ("BackendRunaway", "length limit"),
    ],
)
def test_a_model_failure_says_what_failed(detail: str, words: str) -> None:
    status, code, message = summaries_api.refusal_for(PassOutcome(PassResult.BACKEND_ERROR, detail))
    assert (status, code) == (
        409,
        "summary_model_failed" if "Runaway" not in detail else "summary_bad_reply",
    )
    assert words in message
