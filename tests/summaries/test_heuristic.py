"""The offline summarizer, one rule family at a time, on small hand-built sessions.

Each test pins one behaviour the summary prompt asks of a model (boundary signals,
traps, status evidence, constraints) so that a regression names the rule it broke.
The labelled-set figures live in test_heuristic_quality.py.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any

import pytest

from summaries.core.backends.base import SummaryBackend
from summaries.core.heuristic import HeuristicBackend, summarize_turns
from summaries.core.payload import derive_state, normalize_payload
from summaries.core.turns import TranscriptTurn

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
    def test_a_repeat_days_later_is_a_routine_not_a_resend(self) -> None:
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
        assert len(found) == 1
        assert found[0]["ranges"] == [[1, 1], [2, 2]]  # one routine, one range per day
        assert state(found[0]) == "done"

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
        rows: list[tuple[str, str]] = []
        for n in range(1500):
            rows += [
                ("u", f"Separately: fix widget{n} rendering on the settings page number {n}."),
                ("a", f"Changed widget{n}.tsx to use the theme colour. 3 passed. Committed a{n}."),
            ]
        turns = session(*rows)
        started = time.perf_counter()
        payload = summarize_turns(turns)
        assert time.perf_counter() - started < 5.0
        assert len(payload["intents"]) == 1500  # type: ignore[arg-type]


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
