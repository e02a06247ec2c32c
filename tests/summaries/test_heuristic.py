"""The offline summarizer, one rule family at a time, on small hand-built sessions.

Each test pins one behaviour the summary prompt asks of a model (boundary signals,
traps, status evidence, constraints) so that a regression names the rule it broke.
The labelled-set figures live in test_heuristic_quality.py.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from typing import Any

import pytest

from summaries.core.backends.base import SummaryBackend
from summaries.core.heuristic import HeuristicBackend, summarize_turns
from summaries.core.payload import derive_state, normalize_payload
from summaries.core.transcript_turn import TranscriptTurn

START = datetime.fromisoformat("2026-05-04T09:00:00+02:00")
AUTOMATION_PREFIXES = ("[cron notification", "[subagent completion event]", "=== restored context")


def session(*rows: tuple[str, str] | tuple[str, float]) -> list[TranscriptTurn]:
    """Turns as extraction would produce them.

    Rows: ("u", text) person, ("a", text) assistant, ("auto", text) automation posting
    as the user, ("wait", hours) a pause before the next row. Rows are two minutes
    apart otherwise; a verbatim repeat of the previous person turn is marked as a
    resend, as extract_turns does.
    """
    turns: list[TranscriptTurn] = []
    ts = START
    user_turn = 0
    previous: tuple[str, int] | None = None
    for kind, value in rows:
        if kind == "wait":
            assert isinstance(value, int | float)
            ts += timedelta(hours=value)
            continue
        assert isinstance(value, str)
        ts += timedelta(minutes=2)
        index = len(turns) + 1
        if kind == "a":
            turns.append(TranscriptTurn(index, "assistant", value, ts.isoformat(), None))
        elif kind == "auto":
            assert value.lower().startswith(AUTOMATION_PREFIXES)
            turns.append(TranscriptTurn(index, "user", value, ts.isoformat(), None, injected=True))
        else:
            user_turn += 1
            norm = " ".join(value.split())
            repeat = previous[1] if previous and previous[0] == norm else None
            turns.append(
                TranscriptTurn(index, "user", value, ts.isoformat(), user_turn, repeat_of=repeat)
            )
            previous = (norm, user_turn)
    return turns


def intents(turns: list[TranscriptTurn]) -> list[dict[str, Any]]:
    payload = summarize_turns(turns)
    found = payload["intents"]
    assert isinstance(found, list)
    return found


def state(intent: dict[str, Any]) -> str:
    return derive_state(intent["status"], intent["verified"])


def covered(intent: dict[str, Any]) -> set[int]:
    return {t for a, b in intent["ranges"] for t in range(a, b + 1)}


# --- boundary signals ------------------------------------------------------------------


class TestCommitMergePrCloseWork:
    def test_a_new_request_after_a_commit_is_a_new_intent(self) -> None:
        found = intents(
            session(
                ("u", "The login test is flaky on CI, fix it."),
                ("a", "Replaced the sleep with an explicit wait. 50 passed."),
                ("u", "commit it"),
                ("a", "Committed a41c9e2."),
                ("u", "The invoice email shows the wrong sender address."),
                ("a", "The mailer hard-codes noreply@localhost."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]], [[3, 3]]]
        assert state(found[0]) == "done"

    def test_follow_ups_on_an_opened_pr_stay_with_it(self) -> None:
        found = intents(
            session(
                ("u", "Bump requests to 2.32 in requirements.in and regenerate the lock file."),
                ("a", "Updated requirements.in and regenerated requirements.txt."),
                ("u", "open a PR"),
                ("a", "Opened PR #482."),
                ("u", "Reviewer wants the CVE number in the PR title"),
                ("a", "Renamed the PR to include CVE-2024-35195."),
                ("u", "merged it"),
            )
        )
        assert len(found) == 1
        assert found[0]["ranges"] == [[1, 4]]


class TestTimestampGaps:
    def test_a_finished_routine_asked_again_days_later_is_a_new_intent(self) -> None:
        ask = "Run the daily sales report and post it to #sales."
        found = intents(
            session(
                ("u", ask),
                ("a", "Ran `make report`: 1,204 orders. Posted to #sales."),
                ("wait", 24),
                ("u", ask),
                ("a", "Ran `make report`: 1,317 orders. Posted to #sales."),
            )
        )
        # a new run each day, not insistence and not one intent spanning the week
        assert [f["ranges"] for f in found] == [[[1, 1]], [[2, 2]]]
        assert [state(f) for f in found] == ["done", "done"]

    def test_unfinished_work_repeated_days_later_continues_it(self) -> None:
        ask = "Run the daily sales report and post it to #sales."
        found = intents(
            session(
                ("u", ask),
                ("a", "`make report` failed: the warehouse connection timed out. Nothing posted."),
                ("wait", 24),
                ("u", ask),
                ("a", "Ran `make report`: 1,317 orders. Posted to #sales."),
            )
        )
        assert len(found) == 1
        assert found[0]["ranges"] == [[1, 1], [2, 2]]

    def test_a_same_day_retry_after_a_failure_is_one_range(self) -> None:
        found = intents(
            session(
                ("u", "deploy the api to prod"),
                ("a", "Deploy #771 failed at the health check and rolled back."),
                ("u", "deploy the api to prod"),
                ("a", "Deploy #772 succeeded: /healthz returns 200."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]]]
        assert state(found[0]) == "done"

    def test_work_resumed_after_a_gap_gets_a_second_range(self) -> None:
        found = intents(
            session(
                ("u", "Product search ranks accessories above products. Look into the scoring."),
                ("a", "Implemented weighted full-text search. Haven't benchmarked it yet."),
                ("u", "Separately: the invoice PDF is missing the VAT number."),
                ("a", "Fixed the template; regenerated INV-2211: the VAT number is present."),
                ("wait", 30),
                ("u", "Back to the search ranking: did the index migration run?"),
                ("a", "Ran it: applied in 41s. Tests: 12 passed."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 1], [3, 3]], [[2, 2]]]


class TestPivots:
    @pytest.mark.parametrize(
        "pivot",
        [
            "Switching to the Celery beat problem: it schedules the cleanup task twice.",
            "Separately, the Celery beat schedules the cleanup task twice.",
            "Now let's look at something else: Celery beat schedules the cleanup task twice.",
            "Unrelated: Celery beat schedules the cleanup task twice.",
        ],
    )
    def test_an_explicit_pivot_opens_a_new_intent(self, pivot: str) -> None:
        found = intents(
            session(
                ("u", "Renew the staging certificate with certbot."),
                ("a", "Ran certbot renew: renewed, valid until August. Reloaded nginx."),
                ("u", pivot),
                ("a", "There are two beat replicas."),
            )
        )
        assert len(found) == 2
        assert found[1]["origin_turn"] == 2

    def test_now_lets_about_the_same_work_continues_it(self) -> None:
        found = intents(
            session(
                ("u", "Add cursor pagination to the /orders endpoint."),
                ("a", "Implemented OrderCursorPagination on OrdersViewSet."),
                ("u", "Now let's add a test for it."),
                ("a", "Added test_orders_pagination: 3 passed."),
            )
        )
        assert len(found) == 1


class TestCorrections:
    def test_a_correction_stays_inside_its_intent_and_is_kept(self) -> None:
        found = intents(
            session(
                ("u", "Export yesterday's orders to S3 as CSV."),
                ("a", "Added export_orders, using UTC days."),
                ("u", "no, not UTC. The business day is Europe/Berlin."),
                ("a", "Switched the window to Europe/Berlin midnight."),
            )
        )
        assert len(found) == 1
        assert any("Correction (turn 2)" in line for line in found[0]["progress"])

    def test_that_broke_it_after_a_merge_reopens_the_same_intent(self) -> None:
        found = intents(
            session(
                ("u", "Show booking times in the venue's timezone in the confirmation email."),
                ("a", "The template now renders venue-local time. 23 passed."),
                ("u", "merge"),
                ("a", "Merged #601."),
                ("u", "that broke the iCal attachment, the time is shifted twice"),
                ("a", "Looking at ics.py."),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "in-progress"
        assert found[0]["verified"] is False


class TestCompaction:
    def test_restored_context_is_not_a_boundary(self) -> None:
        found = intents(
            session(
                ("u", "Upgrade the docker-compose Postgres from 13 to 16."),
                ("a", "Bumped the image; dump and restore done. citext needs an init script."),
                ("auto", "=== restored context (compacted) ===\nUpgrading Postgres 13 -> 16."),
                ("u", "ok, where were we. fix the citext thing"),
                ("a", "Added 01-extensions.sql; migrate runs clean. 1,912 passed."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]]]

    def test_a_compaction_notice_from_the_assistant_is_not_a_boundary(self) -> None:
        found = intents(
            session(
                ("u", "Make the checkout e2e test reliable on CI."),
                ("a", "Added a wait for the Stripe iframe. 17 passed, 3 failed."),
                ("a", "[Context compacted: earlier messages were summarized to save space.]"),
                ("u", "Recap since the context got compacted: the address step still flakes."),
                ("a", "Added a wait for the listbox. 20 runs: 19 passed, 1 failed."),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "in-progress"


def test_titles_come_from_each_intents_own_first_turn() -> None:
    found = intents(
        session(
            ("u", "there's a typo in the README install section"),
            ("a", "Fixed: pip install."),
            ("u", "separately: the release workflow fails on publish with a 403"),
            ("a", "The token was revoked."),
        )
    )
    assert "README" in found[0]["title"]
    assert "release workflow" in found[1]["title"]
    assert all(len(i["title"].split()) <= 9 for i in found)


# --- structure: dormant ranges and nesting ---------------------------------------------


def test_a_question_asked_mid_intent_becomes_the_origin_of_the_intent_it_leads_to() -> None:
    found = intents(
        session(
            ("u", "Split PaymentService into a gateway adapter and a ledger writer."),
            ("a", "Extracted LedgerWriter into payments/ledger.py."),
            ("u", "Side question, don't change anything yet: how hard would partial refunds be?"),
            ("a", "Easy after the split, about half a day."),
            ("u", "ok, carry on with the split"),
            ("a", "Extracted GatewayAdapter. 64 passed."),
            ("u", "commit"),
            ("a", "Committed 3f0d2aa."),
            ("u", "Now do the partial refunds we talked about."),
            ("a", "Added an amount parameter to refund(). 71 passed."),
        )
    )
    assert len(found) == 2
    outer, inner = found
    assert outer["ranges"] == [[1, 4]]
    assert inner["origin_turn"] == 2
    assert inner["ranges"] == [[2, 2], [5, 5]]  # inside the outer span, then its own work
    assert covered(inner) & covered(outer) == {2}


# --- status and verified ---------------------------------------------------------------


class TestStatusAndVerified:
    def test_a_passing_run_after_the_change_verifies(self) -> None:
        found = intents(
            session(
                ("u", "The Android release build fails with a duplicate class error."),
                ("a", "Added a constraint aligning kotlin-stdlib to 1.9.22."),
                ("u", "build it"),
                ("a", "`./gradlew assembleRelease` -> BUILD SUCCESSFUL in 3m 12s."),
            )
        )
        assert (found[0]["status"], found[0]["verified"]) == ("completed", True)

    @pytest.mark.parametrize("close", ["merged it, didn't wait for CI", "I shipped it"])
    def test_merged_or_shipped_without_a_run_needs_you(self, close: str) -> None:
        found = intents(
            session(
                ("u", "Set long cache headers for hashed files under /static/."),
                ("a", "Added a WhiteNoise max-age setting for hashed files."),
                ("u", close),
            )
        )
        assert (found[0]["status"], found[0]["verified"]) == ("completed", False)
        assert state(found[0]) == "needs-you"
        assert found[0]["next_steps"], "needs-you work must say what to do next"

    def test_a_pass_before_the_last_change_does_not_verify_it(self) -> None:
        found = intents(
            session(
                ("u", "Add rate limiting to the public API, 100 per minute."),
                ("a", "Added the ratelimit decorator. 6 passed."),
                ("u", "make it 120 per minute"),
                ("a", "Updated the rate to 120/m."),
                ("u", "push it"),
                ("a", "Pushed to main."),
            )
        )
        assert state(found[0]) == "needs-you"

    @pytest.mark.parametrize("drop", ["never mind, forget it", "hmm, let's not.", "scrap it"])
    def test_an_explicit_drop_abandons(self, drop: str) -> None:
        found = intents(
            session(
                ("u", "Add GraphQL subscriptions for order status updates."),
                ("a", "That needs an ASGI server; plan: uvicorn workers and channels."),
                ("u", drop),
                ("a", "OK, no subscriptions."),
            )
        )
        assert [state(i) for i in found] == ["dropped"]

    def test_a_drop_with_new_work_in_the_same_turn_opens_that_work(self) -> None:
        found = intents(
            session(
                ("u", "Upgrade Django from 4.2 to 5.1."),
                ("a", "Bumped to 5.1.4; 37 failures."),
                ("u", "forget it for now, too much. Let's do the logging cleanup instead."),
                ("a", "Reverted the bump. Replaced the print() calls with logging; 12 passed."),
            )
        )
        assert [state(i) for i in found] == ["dropped", "done"]
        assert found[1]["origin_turn"] == 2

    def test_a_failing_run_leaves_the_work_active_and_unverified(self) -> None:
        found = intents(
            session(
                ("u", "The worker leaks memory until it is OOM-killed. Find the leak."),
                ("a", "The parser caches every tree in _SEEN. Bounded it to 10k ids."),
                ("u", "run the soak test"),
                ("a", "After 30 minutes RSS is still climbing, +40MB/h."),
            )
        )
        assert (found[0]["status"], found[0]["verified"]) == ("active", False)
        assert found[0]["next_steps"][0]["why"]

    def test_a_change_the_assistant_says_it_has_not_run_stays_active(self) -> None:
        found = intents(
            session(
                ("u", "Make the mailer read settings.DEFAULT_FROM_EMAIL."),
                ("a", "Done: the mailer now uses it. I haven't run the mail tests yet."),
            )
        )
        assert state(found[0]) == "in-progress"

    def test_questions_answered_are_done_with_nothing_to_verify(self) -> None:
        found = intents(
            session(
                ("u", "How does the sidecar decide it's stale?"),
                ("a", "It compares sig and gen. A failed write keeps the old summary."),
                ("u", "and why isn't mtime alone enough?"),
                ("a", "Rewrites restore the mtime."),
                ("u", "got it, thanks"),
            )
        )
        assert (found[0]["status"], found[0]["verified"]) == ("completed", None)
        assert found[0]["next_steps"] == []


class TestQuestionsAreNotWorkOrders:
    def test_a_feasibility_question_that_leads_nowhere_is_no_intent(self) -> None:
        found = intents(
            session(
                (
                    "u",
                    "How hard would it be to cache the catalogue in Redis? Don't change anything.",
                ),
                ("a", "Moderate: one to two days, invalidation is the hard part."),
                ("u", "What would invalidation look like with the bulk import?"),
                ("a", "Clear the key prefix after each batch."),
                ("u", "OK. Let's leave it there for now."),
            )
        )
        assert found == []

    def test_the_question_is_the_origin_of_the_work_it_leads_to(self) -> None:
        found = intents(
            session(
                ("u", "Could we export reports as XLSX? Just asking, don't build it yet."),
                ("a", "Yes, openpyxl is already a dependency."),
                ("u", "Fix the report header first: the date column says 'Dat'."),
                ("a", "Fixed the header label. 8 passed."),
                ("u", "Fine, go ahead with the XLSX export then."),
                ("a", "Added XlsxExporter. 11 passed."),
            )
        )
        by_origin = {i["origin_turn"]: i for i in found}
        assert set(by_origin) == {1, 2}
        assert by_origin[1]["ranges"] == [[1, 1], [3, 3]]
        assert "XLSX" in by_origin[1]["title"]


# --- traps -----------------------------------------------------------------------------


class TestAutomationAndResends:
    def test_automation_rows_never_create_intents_or_evidence(self) -> None:
        found = intents(
            session(
                ("auto", "[cron notification] nightly-backup FAILED: 3 errors"),
                ("a", "The nightly backup failed with 3 errors."),
                ("u", "The disk on build-02 keeps hitting 95%. Find out what's eating it."),
                (
                    "a",
                    "Docker images: 142G reclaimable. Added a weekly prune; ran it: disk at 41%.",
                ),
                ("auto", "[subagent completion event] deps-audit found 2 advisories"),
                ("a", "deps-audit failed: 2 advisories in pillow and jinja2."),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "done"  # the failures belong to automation, not this work
        assert "advisor" not in json.dumps(found).lower()

    def test_a_resend_is_not_insistence_and_not_a_new_intent(self) -> None:
        ask = "Rotate the Mailgun API key and restart the mailer."
        found = intents(
            session(
                ("u", ask),
                ("a", "Rotated the key and restarted; a test email was delivered."),
                ("u", ask),
                ("a", "Already done a few minutes ago."),
                ("u", "ah sorry, double send. Thanks."),
            )
        )
        assert len(found) == 1
        assert found[0]["ranges"] == [[1, 3]]
        assert state(found[0]) == "done"


def test_a_retracted_part_is_not_an_intent_of_its_own() -> None:
    found = intents(
        session(
            ("u", "Add rate limiting to the public API: 100 requests per minute per key."),
            ("a", "Using django-ratelimit on the public viewsets."),
            ("u", "Also block IPs over 1000 requests an hour at the nginx level."),
            ("a", "Sketching a limit_req_zone."),
            ("u", "Actually scratch the nginx part, ops owns that. Just the app-level limit."),
            ("a", "Dropped the nginx changes. 6 passed."),
        )
    )
    assert len(found) == 1
    assert state(found[0]) == "done"


def test_offered_options_are_not_requests_unless_picked() -> None:
    found = intents(
        session(
            ("u", "Our test suite takes 14 minutes. What can we do?"),
            (
                "a",
                "Options:\n1. pytest-xdist.\n2. SQLite in memory.\n3. --reuse-db.\n4. CI shards.",
            ),
            ("u", "Let's do 1 and 3."),
            ("a", "Added pytest-xdist and --reuse-db. 1,912 passed."),
        )
    )
    assert len(found) == 1
    text = json.dumps(found)
    assert "Chose option 1" in text
    assert "Chose option 3" in text
    assert "SQLite" not in text
    assert "shards" not in text


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
        (intent,) = normalized["intents"]
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


# --- generalization rules: evidence lexicons organised by meaning ------------------------
#
# Each rule below is general (a family of phrasings, never one session's sentence). The
# lexicon tests pin the phrasings by meaning; the session tests pin what the rule does.


def signals_of(text: str) -> Any:
    from summaries.core.heuristic.signals import classify

    return classify(text)


@pytest.mark.parametrize(
    "text",
    [
        "that did the trick",
        "CI is happy",
        "green across the board",
        "tests pass now",
        "the build is green",
        "I eyeballed it on staging, the 30MB upload went through",
        "welcome email looks right btw, checked it in Outlook and Gmail",
        "ran it in the window last night: 52 minutes, no lock complaints",
        "just tried it, works",
        "approved them in chromatic",
    ],
)
def test_the_person_reporting_it_works_or_green_is_verified_positive(text: str) -> None:
    sig = signals_of(text)
    assert sig.claims_works
    assert not sig.deferred_check


@pytest.mark.parametrize(
    "text",
    [
        "deployed to staging but haven't checked",
        "I'll check later",
        "I'll look at the preview tomorrow, swamped right now",
        "I'll send myself one later",
        "will give it a proper test on my phone tonight",
        "pushed, didn't run the tests",
        "haven't had a chance to test it",
    ],
)
def test_the_person_not_having_checked_yet_is_unverified(text: str) -> None:
    sig = signals_of(text)
    assert sig.deferred_check
    assert not sig.claims_works


@pytest.mark.parametrize(
    ("text", "closes"),
    [
        ("it's live", True),
        ("shipped it", True),
        ("merged it, will look at it after lunch", True),
        ("it's out of date", False),
        ("is it out?", False),
        ("the PR is out for review", False),
    ],
)
def test_the_person_reporting_a_close_in_other_words(text: str, closes: bool) -> None:
    assert signals_of(text).user_close is closes


@pytest.mark.parametrize(
    "text",
    [
        "park this for now, I'll talk to the Samsung folks on Monday",
        "nah, scrap that",
        "let's shelve it",
        "put it on ice",
        "let's park the migration for now",
        "nah, not needed",
        "we'll come back to this next quarter",
    ],
)
def test_drop_and_park_phrasings_drop(text: str) -> None:
    assert signals_of(text).drop


@pytest.mark.parametrize(
    "text",
    ["hold off on merging that, security wants to review", "don't deploy it yet"],
)
def test_holding_a_close_step_is_a_pause_not_a_drop(text: str) -> None:
    sig = signals_of(text)
    assert sig.pause
    assert not sig.drop


@pytest.mark.parametrize(
    ("text", "regression"),
    [
        ("still flaky. 14 dupes again. what now", True),
        ("QA says it still crashes on a Samsung A54", True),
        ("main is red now, the integration job can't find get_user", True),
        ("that didn't fix it", True),
        ("it still works after the upgrade", False),
        ("we still need to update the docs", False),
        ("I still think we should use the queue", False),
        ("works on my machine but not on staging", True),
    ],
)
def test_the_person_reporting_it_broken_after_all(text: str, regression: bool) -> None:
    assert signals_of(text).regression is regression


def test_a_pivot_phrase_only_pivots_when_it_leads() -> None:
    assert signals_of("Separately: rename the config key timeout").pivot_strong
    assert signals_of("another billing thing: the dunning emails say Acme Inc.").pivot_strong
    tail = "ugh. QA says 3.8.1 still crashes, revert the whole thing, we'll do a proper hotfix separately"
    assert not signals_of(tail).pivot_strong


def test_a_close_asked_for_in_a_clause_of_its_own() -> None:
    assert signals_of("CI is happy. merge").close_request
    assert signals_of("approved them in chromatic. ship it").close_request
    assert not signals_of("the merge queue is slow, look into it").close_request


class TestVerifiedPositiveAndUnverifiedCompletion:
    def test_green_in_the_persons_words_then_a_merge_is_done(self) -> None:
        found = intents(
            session(
                ("u", "The date picker shows UTC instead of local time, fix it."),
                ("a", "Switched DatePicker.tsx to the browser's timezone."),
                ("u", "green across the board on CI. merge"),
                ("a", "Merged #301."),
            )
        )
        assert [state(i) for i in found] == ["done"]

    def test_deployed_but_not_checked_needs_you_until_the_person_checks(self) -> None:
        rows: list[tuple[str, str] | tuple[str, float]] = [
            ("u", "Raise the ingress body size limit to 50m for media-svc."),
            ("a", "Added the proxy-body-size annotation to the media ingress."),
            ("u", "deployed to staging but haven't checked"),
            ("a", "OK."),
        ]
        assert [state(i) for i in intents(session(*rows))] == ["needs-you"]
        rows += [
            ("wait", 16),
            ("u", "I eyeballed it on staging, a 30MB upload went through"),
            ("a", "Good."),
        ]
        assert [state(i) for i in intents(session(*rows))] == ["done"]

    def test_a_change_made_and_checked_later_is_completed_not_in_progress(self) -> None:
        found = intents(
            session(
                ("u", "The dunning emails still say Acme Inc. in the footer, fix the templates."),
                ("a", "Replaced Acme Inc. with Acme GmbH in the dunning templates."),
                ("u", "I'll look at the preview tomorrow, swamped right now"),
                ("a", "OK."),
            )
        )
        assert (found[0]["status"], found[0]["verified"]) == ("completed", False)

    def test_live_but_still_broken_is_in_progress(self) -> None:
        found = intents(
            session(
                ("u", "Patch the SSRF in the webhook URL field."),
                ("a", "Resolve-and-check on every send. `pytest tests/security`: 31 passed."),
                ("u", "merge it"),
                ("a", "Merged #2210."),
                ("wait", 20),
                ("u", "it's live. BUT the 'Send test event' button still fetches the metadata URL"),
                ("a", "That's a second code path; I'm routing it through the same sender now."),
            )
        )
        assert len(found) == 1
        assert (found[0]["status"], found[0]["verified"]) == ("active", False)

    def test_a_health_probe_or_a_created_response_verifies_a_rollout(self) -> None:
        found = intents(
            session(
                ("u", "roll the media-svc chart to prod"),
                ("a", "Bumped media-svc in gitops and merged it. Argo CD reports Healthy."),
                ("u", "and a real upload?"),
                ("a", "Test upload of 40MB to prod: 201 Created."),
            )
        )
        assert [state(i) for i in found] == ["done"]


class TestDropParkAndRetraction:
    def test_park_after_a_revert_drops_the_whole_intent(self) -> None:
        found = intents(
            session(
                ("u", "Android 14 users crash on launch since 3.8.0."),
                ("a", "Added FOREGROUND_SERVICE_DATA_SYNC to the manifest. Emulator: no crash."),
                (
                    "u",
                    "QA says it still crashes on a Samsung, revert the whole thing, we'll do a proper hotfix separately",
                ),
                ("a", "Reverted both commits; CI is green."),
                ("u", "park this for now"),
                ("a", "Parked."),
            )
        )
        assert [(i["ranges"], state(i)) for i in found] == [([[1, 3]], "dropped")]

    def test_while_youre_in_there_after_a_drop_is_new_work(self) -> None:
        found = intents(
            session(
                ("u", "Fine-tune the ticket classifier on the v3 labels."),
                ("a", "Trained it: val macro-F1 0.712, below v2."),
                ("u", "nah, scrap that, v2 stays in prod"),
                ("a", "OK, stopping there."),
                (
                    "u",
                    "while you're in there: the eval script prints classes in random order, sort them",
                ),
                ("a", "It iterated over a set; now sorted. Ran eval twice: same order both times."),
            )
        )
        assert [(i["ranges"], state(i)) for i in found] == [
            ([[1, 2]], "dropped"),
            ([[3, 3]], "done"),
        ]

    def test_holding_off_a_merge_pauses_the_work_without_dropping_it(self) -> None:
        found = intents(
            session(
                ("u", "Rate-limit password reset requests, 10 per hour per IP."),
                ("a", "Added the decorator; `pytest accounts`: 64 passed. PR #990."),
                ("u", "hold off on merging that, security wants to review the limits first"),
                ("a", "OK, #990 stays open."),
                ("wait", 20),
                ("u", "security approved, merge"),
                ("a", "Merged #990."),
            )
        )
        assert [(i["ranges"], state(i)) for i in found] == [([[1, 2], [3, 3]], "done")]

    def test_dropping_a_piece_and_asking_for_more_keeps_the_intent(self) -> None:
        found = intents(
            session(
                ("u", "orders_daily lands duplicate rows for late events, figure out why"),
                (
                    "a",
                    "The MERGE matches on event_ts; changed it to (order_id, line_no). Deployed.",
                ),
                ("wait", 16),
                ("u", "still flaky. 14 dupes again. what now"),
                (
                    "a",
                    "A different shape: the replay topic re-emits. Options: dedupe the batch, or fix the consumer.",
                ),
                (
                    "u",
                    "hold off on the consumer change, Priya owns it. just write up what you found",
                ),
                ("a", "Wrote docs/incidents/orders-dupes.md with the findings."),
                ("u", "👍"),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "needs-you"  # partly fixed, the last observed run failed

    def test_a_retraction_that_replaces_the_ask_is_a_correction(self) -> None:
        found = intents(
            session(
                ("u", "delete the old audit tables"),
                (
                    "u",
                    "wait, scratch that, compliance needs them. just move them to the archive schema",
                ),
                ("a", "Moved audit_2019..audit_2021 to the archive schema. Row counts match."),
                ("u", "perfect"),
            )
        )
        assert [(i["ranges"], state(i)) for i in found] == [([[1, 3]], "done")]


class TestLessEagerSegmentation:
    def test_a_refinement_after_a_passing_run_stays_in_the_intent(self) -> None:
        found = intents(
            session(
                ("u", "Add rate limiting to POST /api/signup: 5 per IP per hour."),
                ("a", "Added django-ratelimit on SignupView.post. `pytest accounts`: 58 passed."),
                ("u", "use redis for the counter, not the default cache. we run 6 web pods"),
                ("a", "Added a ratelimit cache alias on Redis. 60 passed."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]]]

    def test_a_reaction_with_though_stays_in_the_intent(self) -> None:
        found = intents(
            session(
                ("u", "Gzip the nightly export files before the upload."),
                ("a", "Added gzip; files are 8x smaller. Ran the export: OK."),
                ("u", "the downstream loader chokes on .gz though"),
                ("a", "Updated the loader to read gzip. Reran the load: 1.2M rows loaded."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]]]

    def test_a_follow_up_naming_the_shipped_work_stays_with_it(self) -> None:
        found = intents(
            session(
                ("u", "Add rate limiting to signups, 5 per IP per hour."),
                ("a", "Added the limiter. 58 passed."),
                ("u", "ship it"),
                ("a", "Merged #981 and deployed."),
                ("wait", 20),
                ("u", "whoa, those are real people behind one NAT. raise the limit to 30/hour"),
                ("a", "Raised it to 30/h and deployed. 429 ratio over the 30 minutes after: 1.2%."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2], [3, 3]]]

    def test_a_report_that_it_works_after_a_close_stays_with_it(self) -> None:
        found = intents(
            session(
                ("u", "Speed up the nightly export, it times out."),
                ("a", "Added an index on created_at. The export ran in 4m. Merged and deployed."),
                ("wait", 20),
                ("u", "export ran fine overnight 👍"),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 1], [2, 2]]]

    def test_work_still_open_after_a_night_is_not_split(self) -> None:
        found = intents(
            session(
                ("u", "Port the billing cron to a Kubernetes CronJob."),
                (
                    "a",
                    "Wrote the CronJob manifest; still need to wire the secrets, looking into it.",
                ),
                ("wait", 15),
                ("u", "morning, wire the secrets from vault please"),
                ("a", "Mounted the vault secrets; a manual job run succeeded."),
            )
        )
        assert len(found) == 1

    def test_an_unrelated_question_after_finished_work_opens_its_own_intent(self) -> None:
        found = intents(
            session(
                ("u", "Document the allowlist in docs/runbooks/signup.md."),
                ("a", "Added an 'Allowlisted networks' section."),
                ("u", "LGTM"),
                ("u", "q: how many fake accounts got through before the limiter went in, roughly?"),
                ("a", "4,212 signups matching the bot pattern."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]], [[3, 3]]]

    def test_an_added_ask_after_a_gap_does_not_reopen_finished_work(self) -> None:
        found = intents(
            session(
                ("u", "Rate-limit POST /api/signup, 5 per IP per hour."),
                ("a", "Added the limiter. 58 passed."),
                ("u", "ship it"),
                ("a", "Merged #981 and deployed."),
                ("u", "the welcome email still has the old logo, swap in logo-2026.png"),
                ("a", "Swapped the logo in welcome.html."),
                ("wait", 40),
                (
                    "u",
                    "back. can we also rate-limit password reset requests? same setup, 10/hour per IP",
                ),
                ("a", "Added the same limiter to PasswordResetView. 64 passed."),
            )
        )
        assert [i["origin_turn"] for i in found] == [1, 3, 4]

    def test_a_feasibility_question_taken_up_after_all_is_that_intents_origin(self) -> None:
        found = intents(
            session(
                (
                    "u",
                    "how hard would it be to give `pkgsync` a --dry-run flag? just curious, not for today",
                ),
                ("a", "Not hard: three write paths. About an hour with tests."),
                (
                    "u",
                    "ok. the thing bugging me today: `pkgsync pull` exits 0 when downloads fail. make it exit non-zero",
                ),
                ("a", "pull now exits 2 on any failed download. 88 passed."),
                ("u", "cool. let's do the dry run thing after all, go"),
                ("a", "Added --dry-run to pull and sync. 93 passed."),
            )
        )
        assert sorted((i["origin_turn"], tuple(map(tuple, i["ranges"]))) for i in found) == [
            (1, ((1, 1), (3, 3))),
            (2, ((2, 2),)),
        ]


class TestConstraintPhrasings:
    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            ("roll it to prod. and remember prod only changes through argocd", "argocd"),
            ("don't ever run terraform apply locally, only through atlantis", "atlantis"),
            ("we use pnpm, not npm", "pnpm"),
            ("from now on, deploys go through the release pipeline only", "release pipeline"),
            ("make sure to bump the chart version whenever you touch the templates", "chart"),
            (
                "invoices isn't on the main cluster anymore, it moved to the billing cluster",
                "billing",
            ),
            ("the migrations have to go through DATABASE_URL_BILLING", "DATABASE_URL_BILLING"),
            ("our runners are ubuntu-22.04, so keep runs-on as it is", "22.04"),
            ("we renamed the worker to ingest-worker", "ingest-worker"),
            ("Jenkins is gone, CI runs on GitHub Actions now", "GitHub Actions"),
        ],
    )
    def test_a_standing_rule_in_other_words_is_a_constraint(self, text: str, needle: str) -> None:
        payload = summarize_turns(session(("u", text), ("a", "Noted.")))
        constraints = payload["constraints"]
        assert isinstance(constraints, list)
        assert any(needle in c for c in constraints), constraints

    @pytest.mark.parametrize(
        "text",
        [
            "upgrade postgres to 16 and make sure the migrations still apply cleanly",
            "for now, always skip the flaky test",
            "remember when we fixed the cache bug?",
            "use a dict here, not a list",
            "crash:\n```\nrequires permissions: FOREGROUND_SERVICE_DATA_SYNC must be declared\n```",
        ],
    )
    def test_a_wish_for_this_work_a_temporary_rule_or_a_paste_is_not(self, text: str) -> None:
        payload = summarize_turns(session(("u", text), ("a", "OK.")))
        assert payload["constraints"] == []


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("Argo CD synced media-svc-prod and reports Healthy.", "green"),
        ("Test upload of 40MB to prod: 201 Created.", "green"),
        ("Checked with one of them: login returns 'account suspended'.", "green"),
        ("Signup 429 ratio over the 30 minutes after: 1.2%.", "green"),
        ("Moved the tables to the archive schema; row counts match.", "green"),
        ("Upgraded to 9.2; lint passes.", "green"),
        ("CI on #615: all five Python versions green.", "green"),
        ("Reindex finished at 02:10, the index is current.", "green"),
        ("Rolled out to all 6 pods.", "close"),
        ("It went out with the 02:00 release train.", "close"),
        ("Swapped the logo in welcome.html.", "change"),
    ],
)
def test_reply_evidence_in_other_words(reply: str, kind: str) -> None:
    from summaries.core.heuristic.evidence import reply_evidence

    assert kind in [e.kind.value for e in reply_evidence(reply)]


@pytest.mark.parametrize(
    "reply",
    [
        "Not yet: main goes out with the nightly release train at 02:00.",
        "The import finished at 03:10 with 14 errors.",
        "A lockout after 5 failures is the default.",
    ],
)
def test_reply_evidence_without_a_pass_or_a_close(reply: str) -> None:
    from summaries.core.heuristic.evidence import reply_evidence

    kinds = [e.kind.value for e in reply_evidence(reply)]
    assert "green" not in kinds
    assert "close" not in kinds


# --- rules from the held-out-5b misses ----------------------------------------------------
#
# held-out-5b (measured blind at F1 0.61) merged distinct goals far more often than it split
# one: finished work kept absorbing what came after it. Each rule below names the general
# cause; the sessions here are paraphrases, never the batch's own sentences.


class TestFinishedWorkAfterAPause:
    """After a day-scale pause, finished work is picked up only by a turn that reports on
    it: shared words, a bare "same"/"and" lead or a short question are not enough."""

    def _fixed_then(self, *rows: tuple[str, str] | tuple[str, float]) -> list[dict[str, Any]]:
        return intents(
            session(
                ("u", "the nightly export to s3 fails with AccessDenied, look into it"),
                ("a", "The export role lost s3:PutObject. Added it back; reran the export: OK."),
                ("u", "thanks"),
                ("wait", 20),
                *rows,
            )
        )

    @pytest.mark.parametrize(
        "text",
        [
            "same s3 thing on the backups bucket?",
            "why did the export take 40 minutes?",
            "and the thumbnails?",
        ],
    )
    def test_a_new_question_the_next_day_is_a_new_intent(self, text: str) -> None:
        found = self._fixed_then(("u", text), ("a", "Different cause: the bucket policy."))
        assert [i["origin_turn"] for i in found] == [1, 3]
        assert state(found[0]) == "done"

    @pytest.mark.parametrize(
        "text",
        [
            "the export failed again last night, still AccessDenied",
            "export ran fine overnight, thanks",
            "where were we with the export role? back to it",
        ],
    )
    def test_a_report_on_the_finished_work_stays_with_it(self, text: str) -> None:
        found = self._fixed_then(("u", text), ("a", "Looking at the export logs."))
        assert len(found) == 1
        assert covered(found[0]) == {1, 2, 3}


def test_a_correction_after_a_merge_about_something_else_is_a_new_intent() -> None:
    found = intents(
        session(
            ("u", "make the invoice pdf render the vat number"),
            ("a", "Added the VAT number to invoice.html. 12 passed."),
            ("u", "merge it"),
            ("a", "Merged #88."),
            (
                "u",
                "oh and the logs bucket is acme-logs-eu now, not acme-logs, it was renamed. "
                "fix the terraform var if it still says the old name",
            ),
            ("a", "Updated var.logs_bucket in terraform/logs.tf."),
        )
    )
    assert [i["origin_turn"] for i in found] == [1, 3]


def test_a_correction_after_a_merge_about_the_work_stays_with_it() -> None:
    found = intents(
        session(
            ("u", "make the invoice pdf render the vat number"),
            ("a", "Added the VAT number to invoice.html. 12 passed."),
            ("u", "merge it"),
            ("a", "Merged #88."),
            ("u", "no wait, the vat number should go under the address, not in the footer"),
            ("a", "Moved it under the address block in invoice.html."),
        )
    )
    assert len(found) == 1


class TestNumberedReferences:
    def test_refs_are_words_of_their_own(self) -> None:
        from summaries.core.heuristic.words import refs

        assert refs("PR 81, #3301 and issue 12; see MR !74") == {"#81", "#3301", "#12", "#74"}
        assert refs("evals at step 1200, port 5432, color #fff, it&#39;s") == frozenset()

    def _two_prs(self, *rows: tuple[str, str] | tuple[str, float]) -> list[dict[str, Any]]:
        return intents(
            session(
                ("u", "drop the legacy exporter module, nothing imports it anymore"),
                ("a", "Removed exporter/legacy.py and its tests. 210 passed."),
                ("u", "open a PR"),
                ("a", "Opened #512."),
                ("u", "the search box fires a request on every keystroke. debounce it, 250ms"),
                ("a", "Debounced the search input, with a fake-timers test. Opened #513."),
                ("wait", 16),
                *rows,
            )
        )

    def test_a_turn_naming_a_pr_goes_to_the_work_that_opened_it(self) -> None:
        found = self._two_prs(
            ("u", "#512 got approved. merge it"),
            ("a", "Merged #512."),
            ("u", "and #513?"),
            ("a", "Waiting for review; CI green."),
        )
        assert [sorted(covered(i)) for i in found] == [[1, 2, 4], [3, 5]]

    def test_a_number_only_mentioned_in_passing_claims_nothing(self) -> None:
        found = intents(
            session(
                ("u", "why is the login page slow?"),
                ("a", "It loads all 40 fonts. Same root cause as #77, which is still open."),
                ("u", "thanks"),
                ("u", "separately: #77 needs a changelog entry, write it"),
                ("a", "Added the entry for #77 to CHANGELOG.md."),
            )
        )
        assert [i["origin_turn"] for i in found] == [1, 3]


class TestAnAsideInTheSameArea:
    def test_a_new_question_framed_by_the_area_is_a_new_intent(self) -> None:
        found = intents(
            session(
                ("u", "remove the oldCart feature flag from the storefront"),
                ("a", "Removed oldCart from 9 files. yarn test: 301 passed."),
                ("u", "open the PR"),
                ("a", "Opened #4410."),
                (
                    "u",
                    "while we're in the storefront: does the address autocomplete hit the "
                    "geocoder on every keystroke? ops says our quota is gone by noon",
                ),
                ("a", "It does: AddressField calls geocode in onChange."),
                ("u", "throttle it to one call per 400ms"),
                ("a", "Throttled the geocode call, with a test."),
            )
        )
        assert [i["origin_turn"] for i in found] == [1, 3]

    def test_an_added_bit_framed_the_same_way_stays(self) -> None:
        found = intents(
            session(
                ("u", "rename parse_amt to parse_amount across the billing package"),
                ("a", "Renamed it in 7 files. 88 passed."),
                ("u", "while you're in there, also rename fmt_amt to format_amount"),
                ("a", "Renamed fmt_amt too. 88 passed."),
            )
        )
        assert len(found) == 1


class TestAGuardAgainstARecurrence:
    @pytest.mark.parametrize(
        "text",
        [
            "why did killing the import job leave the lock behind? make sure that can't happen "
            "again",
            "ok. now prevent this from happening again: a killed import job must release its lock",
            "the import lock job thing: how do we make sure it never happens again? do that",
        ],
    )
    def test_once_the_incident_is_settled_the_guard_is_its_own_intent(self, text: str) -> None:
        found = intents(
            session(
                ("u", "the nightly import is stuck on a lock held by a killed import job"),
                ("a", "Released the stale import lock and reran the import job: OK, 0 errors."),
                ("u", text),
                ("a", "The job is killed before its finally block; added a lock TTL in import.py."),
            )
        )
        assert [i["origin_turn"] for i in found] == [1, 2]

    def test_while_the_incident_is_open_it_is_part_of_the_fix(self) -> None:
        found = intents(
            session(
                ("u", "cron messages arrive twice, find the bug"),
                ("a", "A stale scheduler process survives a SIGHUP, so two schedulers run."),
                ("u", "how do we prevent the stale scheduler from surviving a SIGHUP?"),
                ("a", "Options: 1. a cleanup hook on HUP 2. a pidfile lock"),
            )
        )
        assert len(found) == 1


def test_a_breakage_blamed_on_an_earlier_step_goes_to_that_work() -> None:
    found = intents(
        session(
            ("u", "remove the betaSearch feature flag"),
            ("a", "Removed betaSearch from 6 files. 140 passed."),
            ("u", "merge it"),
            ("a", "Merged #601."),
            ("u", "the csv export button does nothing on safari. fix it"),
            (
                "a",
                "Safari blocks the blob download; switched to an anchor with download. 141 passed.",
            ),
            ("u", "nightly e2e went red after the flag removal: search-results spec"),
            ("a", "The spec clicked the old beta toggle. Fixed the selector; e2e passes."),
        )
    )
    by_origin = {i["origin_turn"]: covered(i) for i in found}
    assert by_origin == {1: {1, 2, 4}, 3: {3}}


def test_the_stems_of_stopwords_are_stopwords() -> None:
    from summaries.core.heuristic.words import content_words

    assert content_words("it runs, needs changes and uses things") == frozenset()
    assert content_words("the invoice runner") == {"invoic", "runner"}


class TestOneItemOfABatch:
    @pytest.mark.parametrize(
        ("text", "item"),
        [
            ("eslint-plugin-react one: skip it, there's an upstream bug", True),
            ("the flaky ones: leave them, I'll look next week", True),
            ("skip the pillow one for now", True),
            ("nah, skip it", False),
        ],
    )
    def test_dropping_one_member_of_a_set(self, text: str, item: bool) -> None:
        sig = signals_of(text)
        assert sig.drop
        assert sig.drop_item is item

    def test_skipping_one_item_leaves_the_batch_going(self) -> None:
        found = intents(
            session(
                ("u", "go through the renovate PRs and merge the green patch ones"),
                (
                    "a",
                    "Merged 5 of 7: #31 #32 #33 #35 #36. Not merged: #34 pillow (CI red), "
                    "#37 mypy (CI red).",
                ),
                ("u", "the pillow one: skip it, upstream regression"),
                ("a", "Left #34 open with a comment."),
                ("u", "fix the mypy errors in #37 and merge it"),
                ("a", "Fixed 3 type errors. CI green on #37; merged."),
            )
        )
        assert len(found) == 1
        assert state(found[0]) == "done"


def test_the_ones_in_play_point_back() -> None:
    assert signals_of("for the ones the linter flags, add a noqa and move on").refers_back
    assert signals_of("the red ones need a rerun").refers_back


class TestAHandOffClosesYourPart:
    @pytest.mark.parametrize(
        ("text", "closes"),
        [
            ("sent it to Marta", True),
            ("ok, handed it over to the infra team", True),
            ("forwarded the script to finance", True),
            ("sent it to staging", False),
            ("sent it to review", False),
        ],
    )
    def test_in_other_words(self, text: str, closes: bool) -> None:
        assert signals_of(text).user_close is closes

    def test_a_script_handed_over_unrun_needs_you(self) -> None:
        found = intents(
            session(
                ("u", "write the SQL to reverse the 12 duplicate refunds, don't run it"),
                (
                    "a",
                    "Wrote scripts/sql/reverse_refunds.sql. I ran only its SELECT part against "
                    "the replica: 12 rows.",
                ),
                ("u", "sent it to Priya"),
                ("a", "👍"),
            )
        )
        assert len(found) == 1
        assert found[0]["status"] == "completed"
        assert state(found[0]) == "needs-you"


@pytest.mark.parametrize(
    ("reply", "present", "absent"),
    [
        ("Pushed to #990; CI is running.", "open", "close"),
        ("Pushed the fix to the PR, the checks are still pending.", "open", "close"),
        ("Merged #81; CI is running on main.", "close", "green"),
        ("I ran only its SELECT part: 4 rows.", "open", "green"),
        ("Ran the migration on staging: 4 rows.", "green", "open"),
    ],
)
def test_a_run_under_way_or_of_one_part_is_no_outcome(
    reply: str, present: str, absent: str
) -> None:
    from summaries.core.heuristic.evidence import reply_evidence

    kinds = [e.kind.value for e in reply_evidence(reply)]
    assert present in kinds
    assert absent not in kinds


class TestLexiconsByMeaning:
    @pytest.mark.parametrize(
        "text",
        [
            "hold off on the MR, I want Tomás to look at it first",
            "hold off on the prod deploy till Jan is back",
            "hold off on that PR until security has reviewed it",
        ],
    )
    def test_holding_a_named_close_step_is_a_pause(self, text: str) -> None:
        sig = signals_of(text)
        assert sig.pause
        assert not sig.drop

    @pytest.mark.parametrize(
        ("text", "drop"),
        [
            ("scrap it from this repo, the platform team will own it", True),
            ("not touching it this quarter", True),
            ("drop it from the list", False),
        ],
    )
    def test_giving_the_work_up(self, text: str, drop: bool) -> None:
        assert signals_of(text).drop is drop

    @pytest.mark.parametrize(
        "text",
        ["the rollout got vetoed, bring the old banner back", "let's revive the csv export idea"],
    )
    def test_bringing_dropped_work_back_resumes(self, text: str) -> None:
        assert signals_of(text).resume

    @pytest.mark.parametrize(
        "text",
        [
            "would sharding the table by tenant actually be worth it?",
            "is it even worth the effort?",
        ],
    )
    def test_whether_it_pays_off_is_a_feasibility_question(self, text: str) -> None:
        assert signals_of(text).feasibility

    def test_a_random_question_pivots(self) -> None:
        assert signals_of("random q: can postgres do partial indexes on jsonb keys?").pivot_strong


def test_a_worth_it_question_declined_is_no_intent() -> None:
    found = intents(
        session(
            ("u", "pull signups per week for the last quarter, split by country"),
            ("a", "| week | US | DE |\n|---|---|---|\n| 07-07 | 1,204 | 310 |"),
            ("u", "thanks. unrelated: would caching the events table in redis be worth it?"),
            ("a", "Probably not: 92% of queries hit cold partitions."),
            ("u", "good to know, not touching it this year"),
            ("a", "OK."),
        )
    )
    assert [i["origin_turn"] for i in found] == [1]


def test_a_dropped_document_brought_back_is_one_intent_with_nothing_to_run() -> None:
    found = intents(
        session(
            ("u", "write an upgrade guide for the v2 -> v3 CLI, flags changed a lot"),
            ("a", "Drafted docs/upgrading-to-v3.md, about 700 words."),
            ("u", "nah, scrap that, we'll ship a compat shim instead"),
            ("a", "OK, deleted the draft."),
            ("wait", 40),
            ("u", "the shim got rejected, bring the guide back"),
            ("a", "Restored docs/upgrading-to-v3.md."),
            ("u", "merged, thanks"),
        )
    )
    assert len(found) == 1
    assert found[0]["status"] == "completed"
    assert found[0]["verified"] is None


def test_platforms_as_data_columns_leave_an_analysis_with_nothing_to_run() -> None:
    from summaries.core.heuristic import lexicon as lx

    assert not lx.CODE_MARKERS.search("weekly signups split by platform (ios/android/web)")
    assert lx.CODE_MARKERS.search("the iOS app crashes on launch")
    assert lx.CODE_MARKERS.search("the Android build fails")


class TestMoreConstraintPhrasings:
    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            ("fyi the admin panel is only reachable over the VPN, test from the jump host", "VPN"),
            ("don't apply it: ops (Dana) handles anything that touches DNS, always", "Dana"),
            ("hold off on the release till Jan is back, he owns the prod deploys", "Jan"),
            (
                "wait, leave out test accounts, anything with a @example.org email. "
                "always do that for these reports",
                "example.org",
            ),
        ],
    )
    def test_a_standing_rule_in_other_words_is_a_constraint(self, text: str, needle: str) -> None:
        payload = summarize_turns(session(("u", text), ("a", "Noted.")))
        constraints = payload["constraints"]
        assert isinstance(constraints, list)
        assert any(needle in c for c in constraints), constraints
