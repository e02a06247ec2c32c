"""The offline summarizer, one rule family at a time: Status and verified, questions that are not work orders, and the traps (automation, resends, retractions, options).

Split from the former test_heuristic.py; helpers in heuristic_cases.py. The labelled-set
figures live in test_heuristic_quality.py.
"""

import json

import pytest

from tests.summaries.heuristic_cases import (
    intents,
    session,
    state,
)

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
