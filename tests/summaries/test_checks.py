"""The checks and the structure index on extracted turns alone (pure core)."""

from __future__ import annotations

from typing import Any

from summaries.core.checks import check_reply, cut_title
from summaries.core.extract import extract_turns
from summaries.core.intents import SummaryChecks
from summaries.core.prompt import build_prompt
from summaries.core.structure import build_index, render_structure


def _checked(reply: object, index: Any, **kw: Any) -> tuple[dict[str, Any], SummaryChecks]:
    out, report = check_reply(reply, index, **kw)
    assert isinstance(out, dict)
    return out, report


def _rows(*, runs: int = 1) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the parser crash, use uv run for everything", "ts": "t01"},
        {"role": "assistant", "content": "On it.", "ts": "t02"},
        {"role": "tool_call", "content": "src/parse.py: guard None", "meta": {"tool": "edit"}},
        {
            "role": "tool_result",
            "content": "ok",
            "ts": "t03",
            "meta": {"tool": "edit", "exit_code": 0},
        },
    ]
    for i in range(runs):
        rows += [
            {"role": "tool_call", "content": "uv run pytest -q", "meta": {"tool": "bash"}},
            {
                "role": "tool_result",
                "content": f"{40 + i} passed in 1.2s",
                "ts": f"t1{i}",
                "meta": {"tool": "bash", "exit_code": 0},
            },
        ]
    rows += [
        {"role": "assistant", "content": "Fixed, all tests pass.", "ts": "t50"},
        {"role": "user", "content": "great, that works", "ts": "t51"},
    ]
    return rows


def test_a_title_is_cut_at_a_word() -> None:
    title = "Make the importer tolerate locale specific decimal separators " * 3
    cut = cut_title(title)
    assert len(cut) <= 80
    assert title.startswith(cut)
    assert title[len(cut)] == " "


def test_a_quote_that_is_not_in_the_cited_row_drops_the_citation() -> None:
    turns = extract_turns(_rows())
    reply = {
        "intents": [
            {
                "title": "Fix the parser crash",
                "ranges": [[1, 2]],
                "status": "completed",
                "verified": True,
                "cites": [{"ref": "F1.2", "quote": "48 passed"}],  # the row says 40
            }
        ]
    }
    out, report = _checked(reply, build_index(turns), user_turns=2)
    assert report.citations_dropped == 1
    assert out["intents"][0]["verified"] is False  # and nothing else backs it


def test_the_persons_confirmation_after_the_change_keeps_verified() -> None:
    turns = extract_turns(_rows())
    reply = {
        "intents": [
            {
                "title": "t",
                "ranges": [[1, 2]],
                "status": "completed",
                "verified": True,
                "cites": ["U2"],
            }
        ]
    }
    out, report = _checked(reply, build_index(turns), user_turns=2)
    assert report.total() == 0
    assert out["intents"][0]["evidence"]["kind"] == "user_confirmed"
    assert out["intents"][0]["evidence"]["ts"] == "t51"


def test_the_turn_that_opened_the_work_is_no_confirmation() -> None:
    turns = extract_turns(_rows())
    reply = {
        "intents": [
            {
                "title": "t",
                "ranges": [[1, 1]],
                "status": "completed",
                "verified": True,
                "cites": ["U1"],
            }
        ]
    }
    _, report = _checked(reply, build_index(turns), user_turns=2)
    assert report.verified_downgraded == 1


def test_a_verified_intent_checked_again_keeps_its_cited_run() -> None:
    """An incremental pass checks the unchanged intents again: the evidence the checks
    wrote (the line of a run no runner list names) must still hold."""
    rows = _rows()
    rows[4]["content"] = "nix develop -c cabal test export-spec"
    rows[5]["content"] = "Test suite export-spec: PASS, 0 failures"
    turns = extract_turns(rows)
    index = build_index(turns)
    reply = {
        "intents": [
            {
                "title": "t",
                "ranges": [[1, 1]],
                "status": "completed",
                "verified": True,
                "cites": ["F1.2"],
            }
        ]
    }
    first, _ = _checked(reply, index, user_turns=2)
    assert first["intents"][0]["evidence"]["kind"] == "test_passed"
    again, report = _checked(first, index, user_turns=2)
    assert report.total() == 0, report.describe()
    assert again["intents"][0]["verified"] is True
    assert again["intents"][0]["evidence"] == first["intents"][0]["evidence"]


def test_the_heuristics_evidence_is_checked_against_its_row() -> None:
    turns = extract_turns(_rows())
    index = build_index(turns)
    good = {"turn": 1, "ts": "t50", "kind": "test_passed", "quote": "Fixed, all tests pass."}
    forged = {**good, "quote": "All 400 tests pass on CI."}
    for evidence, dropped in ((good, 0), (forged, 1)):
        intent = {"title": "t", "ranges": [[1, 1]], "status": "active", "evidence": evidence}
        out, report = _checked({"intents": [intent]}, index, user_turns=2)
        assert report.citations_dropped == dropped
        assert (out["intents"][0]["evidence"] is None) == bool(dropped)


def test_a_constraint_stated_by_the_person_is_kept_and_an_invented_one_dropped() -> None:
    turns = extract_turns(_rows())
    reply = {
        "intents": [{"title": "t", "ranges": [[1, 2]]}],
        "constraints": ["Use uv run for every command", {"text": "Never deploy on Fridays"}],
    }
    out, report = _checked(reply, build_index(turns), user_turns=2)
    assert out["constraints"] == ["Use uv run for every command"]
    assert report.constraints_dropped == 1


def test_over_budget_the_last_change_and_last_check_are_kept() -> None:
    turns = extract_turns(_rows(runs=60))
    index = build_index(turns)
    text = render_structure(index, 600)
    assert len(text) <= 600
    assert "F1.1 edit" in text  # the last (only) change
    assert "F1.61 bash: uv run pytest -q -> exit 0; 99 passed" in text  # the last check
    assert "omitted" in text


def test_the_prompt_lists_tool_facts_after_the_turns() -> None:
    prompt = build_prompt(extract_turns(_rows()))
    facts = prompt[prompt.index("TOOL FACTS (") :]
    assert "F1.2 bash: uv run pytest -q -> exit 0; 40 passed => Tests passed." in facts


def _one_run(command: str, output: str, code: int = 0) -> list[dict[str, Any]]:
    rows = _rows(runs=0)[:4]
    rows += [
        {"role": "tool_call", "content": command, "meta": {"tool": "bash"}},
        {
            "role": "tool_result",
            "content": output,
            "ts": "t20",
            "meta": {"tool": "bash", "exit_code": code},
        },
        {"role": "assistant", "content": "Done.", "ts": "t50"},
    ]
    return rows


def _verified_citing_the_run(rows: list[dict[str, Any]]) -> bool | None:
    turns = extract_turns(rows)
    index = build_index(turns)
    run = index.facts[-1].ref
    reply = {
        "intents": [
            {
                "title": "Fix the parser crash",
                "ranges": [[1, 1]],
                "status": "completed",
                "verified": True,
                "cites": [run],
            }
        ]
    }
    out, _ = _checked(reply, index, user_turns=1)
    verified: bool | None = out["intents"][0]["verified"]
    return verified


def test_a_cited_run_that_succeeded_after_the_change_verifies_whatever_its_runner() -> None:
    # Neither command is a runner the heuristic names; both exercised the work and passed.
    assert (
        _verified_citing_the_run(_one_run("pnpm -r test -- --ci", "51 passed, 97 passed")) is True
    )
    assert (
        _verified_citing_the_run(_one_run("pnpm --filter forms storybook:build", "built")) is True
    )


def test_a_cited_read_install_or_failed_run_verifies_nothing() -> None:
    for command, output, code in (
        ("ls src", "parse.py", 0),
        ("pnpm up lodash@4.17.21 -r", "Done in 6.2s", 0),
        ("git push origin main", "Everything up-to-date", 0),
        ("./smoke.sh", "boom", 1),
        ("make e2e", "2 failed, 40 passed", 0),
    ):
        assert _verified_citing_the_run(_one_run(command, output, code)) is not True, command
