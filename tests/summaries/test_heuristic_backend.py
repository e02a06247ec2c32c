"""The offline summarizer, one rule family at a time: Constraints, the backend contract, retraction, work with nothing to run, the person's word on the result.

Split from the former test_heuristic.py; helpers in heuristic_cases.py. The labelled-set
figures live in test_heuristic_quality.py.
"""

import json
import sys
from typing import Any

import pytest

from summaries.core.backends.base import SummaryBackend
from summaries.core.heuristic import HeuristicBackend, summarize_turns
from summaries.core.payload import normalize_payload
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries.heuristic_cases import (
    intents,
    session,
    state,
)

# --- constraints -----------------------------------------------------------------------


class TestConstraints:
    def test_required_flag_step_after_change_and_corrected_name(self) -> None:
        payload = summarize_turns(
            session(
                ("u", "Deploys go through ./deploy.sh and you have to pass --no-assets."),
                ("a", "Deployed build 8812."),
                ("u", "After any schema change you have to run `npm run codegen`."),
                ("a", "Ran codegen."),
                ("u", "it's billing-service, not billing-svc"),
                ("a", "Using billing-service."),
            )
        )
        joined = " | ".join(payload["constraints"])  # type: ignore[arg-type]
        assert "--no-assets" in joined
        assert "codegen" in joined
        assert "billing-service" in joined

    def test_the_latest_statement_of_a_fact_wins(self) -> None:
        payload = summarize_turns(
            session(
                ("u", "Deploy staging. You have to pass --skip-assets or it rebuilds the CDN."),
                ("a", "Deployed."),
                ("u", "the flag got renamed, it's --no-assets now"),
                ("a", "Noted."),
                ("u", "Postgres should listen on 5433 locally."),
                ("a", "Mapped 5433."),
                ("u", "actually we moved the local Postgres to 5434 last sprint"),
                ("a", "Changed the mapping to 5434."),
            )
        )
        joined = " | ".join(payload["constraints"])  # type: ignore[arg-type]
        assert "--no-assets" in joined
        assert "5434" in joined
        assert "--skip-assets or" not in joined
        assert "listen on 5433" not in joined

    def test_only_the_person_states_constraints_and_never_through_automation(self) -> None:
        payload = summarize_turns(
            session(
                ("u", "Run the migrations on staging."),
                ("a", "You must always pass --fake-initial on the legacy DB."),
                ("auto", "[cron notification] reminder: always pass --dry-run to the cleaner"),
                ("u", "thanks"),
            )
        )
        assert payload["constraints"] == []

    def test_at_most_a_handful(self) -> None:
        rows: list[tuple[str, str]] = []
        for n in range(9):
            rows += [("u", f"Always pass --flag-{n} to tool{n}."), ("a", "Noted.")]
        payload = summarize_turns(session(*rows))
        assert len(payload["constraints"]) == 5  # type: ignore[arg-type]


# --- the backend and its contract ------------------------------------------------------


class TestBackend:
    TURNS = session(
        ("u", "Fix the flaky login test."),
        ("a", "Replaced the sleep with a wait. 50 passed."),
        ("u", "merge"),
        ("a", "Merged #12."),
    )

    def test_is_a_summary_backend_named_heuristic(self) -> None:
        backend = HeuristicBackend()
        assert isinstance(backend, SummaryBackend)
        assert backend.name == "heuristic"

    def test_reply_is_the_payload_as_json_and_normalizes(self) -> None:
        reply = HeuristicBackend().generate("ignored prompt", self.TURNS)
        normalized = normalize_payload(json.loads(reply))
        assert normalized is not None
        (intent,) = normalized.model_dump(mode="json")["intents"]
        assert intent["state"] == "done"
        assert set(intent) >= {"title", "initial_intent", "progress", "next_steps", "ranges"}

    def test_deterministic(self) -> None:
        first = HeuristicBackend().generate("", self.TURNS)
        assert all(HeuristicBackend().generate("", self.TURNS) == first for _ in range(3))

    @pytest.mark.parametrize(
        "turns",
        [
            [],
            [TranscriptTurn(1, "assistant", "hello", None, None)],
            [TranscriptTurn(1, "user", "fix the build", None, 1)],
            [TranscriptTurn(1, "user", "fix the build", "not a timestamp", 1)],
            [TranscriptTurn(1, "user", "x" * 4000, "2026-01-15T10:00:00", 1, truncated=True)],
        ],
    )
    def test_degenerate_input_never_raises(self, turns: list[TranscriptTurn]) -> None:
        payload = json.loads(HeuristicBackend().generate("", turns))
        assert set(payload) == {"intents", "constraints"}

    def test_linear_in_turns(self) -> None:
        """Event-based, no clock: the work (Python and C calls, counted by a profile hook,
        the same on every machine) for twice the turns is about twice, not four times.
        Wall-clock figures: bench/bench_heuristic_scaling.py."""

        def calls(n: int) -> int:
            rows: list[tuple[str, str]] = []
            for i in range(n):
                rows += [
                    ("u", f"Separately: fix widget{i} rendering on the settings page number {i}."),
                    (
                        "a",
                        f"Changed widget{i}.tsx to use the theme colour. 3 passed. Committed a{i}.",
                    ),
                ]
            turns = session(*rows)
            events = 0

            def count(frame: Any, event: str, arg: Any) -> None:
                nonlocal events
                if event in ("call", "c_call"):
                    events += 1

            sys.setprofile(count)
            try:
                payload = summarize_turns(turns)
            finally:
                sys.setprofile(None)
            assert len(payload["intents"]) == n  # type: ignore[arg-type]
            return events

        small, large = calls(150), calls(300)
        assert large / small < 2.5  # linear is ~2.0; quadratic work would be ~4.0


class TestRetraction:
    def test_retracting_a_request_that_opened_an_intent_removes_it(self) -> None:
        found = intents(
            session(
                ("u", "Fix the flaky login test."),
                ("a", "Replaced the sleep with a wait. 50 passed."),
                ("u", "Separately: rename the config key timeout to timeout_s everywhere."),
                ("u", "ignore my last message, the rename is already done upstream"),
                ("a", "OK, leaving the config key alone."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 1]]]
        assert state(found[0]) == "done"

    def test_retracting_an_added_ask_keeps_the_finished_work_finished(self) -> None:
        found = intents(
            session(
                ("u", "Set up a GitHub Action that runs the tests on every PR."),
                ("a", "Added tests.yml; first run: 402 passed."),
                ("u", "and add the lint job"),
                ("u", "ignore my last message, lint is already in pre-commit"),
                ("a", "OK, no lint job."),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "done"


class TestWorkWithNothingToRun:
    def test_an_analysis_or_document_is_done_without_a_run(self) -> None:
        found = intents(
            session(
                ("u", "Compute monthly churn by signup cohort from signups.csv for 2025."),
                ("a", "Month-3 churn ranges from 8% to 14%."),
                ("u", "put the table and a chart into a one-page PDF for the board"),
                ("a", "Created churn_report.pdf with the heatmap and the table."),
            )
        )
        assert (found[0]["status"], found[0]["verified"]) == ("completed", None)

    def test_code_changed_and_never_run_still_needs_you(self) -> None:
        found = intents(
            session(
                ("u", "Make the pre-commit hook skip test files."),
                ("a", "The hook now ignores *.test.ts and __tests__/."),
            )
        )
        assert state(found[0]) == "needs-you"


class TestThePersonsWordOnTheResult:
    def test_the_person_confirming_it_works_verifies_it(self) -> None:
        found = intents(
            session(
                ("u", "Users on Safari get logged out on every refresh."),
                ("a", "Added Secure to the session cookie and redeployed staging."),
                ("u", "still happening on staging"),
                ("a", "Set SECURE_PROXY_SSL_HEADER and redeployed staging."),
                ("u", "confirmed, refresh keeps me logged in now"),
                ("u", "merge it"),
                ("a", "Merged #2210."),
            )
        )
        assert len(found) == 1
        assert (found[0]["status"], found[0]["verified"]) == ("completed", True)
        assert any(line.startswith("Correction (turn 2)") for line in found[0]["progress"])

    def test_the_person_checking_later_leaves_it_unverified(self) -> None:
        found = intents(
            session(
                ("u", "Upgrade the frontend build to Node 20."),
                ("a", "Swapped node-sass for sass; the build passes now."),
                ("u", "deploy the frontend to staging"),
                ("a", "Deployed build 2211 to staging."),
                ("u", "I'll click through it tomorrow"),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "needs-you"

    def test_a_revert_then_leaving_it_drops_the_work(self) -> None:
        found = intents(
            session(
                ("u", "The product page takes 2.5s on mobile. Cache the product fragment."),
                ("a", "Wrapped it in {% cache 300 %}. Tests: 88 passed."),
                ("u", "hmm actually revert that, it broke the admin preview"),
                ("a", "Reverted the fragment cache."),
                ("u", "let's leave it for now"),
            )
        )
        assert [state(i) for i in found] == ["dropped"]


def test_one_sentence_with_two_facts_keeps_the_one_still_true() -> None:
    payload = summarize_turns(
        session(
            (
                "u",
                "Deploy the hotfix. We deploy with `fab deploy:prod`, and you must run `fab migrate` first.",
            ),
            ("a", "Ran `fab migrate` and `fab deploy:prod`."),
            (
                "u",
                "correction: the migrate task is `fab db.migrate` now, `fab migrate` was removed.",
            ),
            ("a", "Ran `fab db.migrate`. Smoke test: checkout flow ok."),
        )
    )
    constraints = payload["constraints"]
    assert isinstance(constraints, list)
    assert any("fab deploy:prod" in c for c in constraints)
    assert any("fab db.migrate" in c for c in constraints)
    assert not any("`fab migrate` first" in c for c in constraints)
    found = payload["intents"]
    assert isinstance(found, list)
    assert [i["verified"] for i in found] == [True]
