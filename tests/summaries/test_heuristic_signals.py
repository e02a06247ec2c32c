"""The offline summarizer, one rule family at a time: Boundary signals, nesting, titles: what opens or closes an intent.

Split from the former test_heuristic.py; helpers in heuristic_cases.py. The labelled-set
figures live in test_heuristic_quality.py.
"""

import pytest

from tests.summaries.heuristic_cases import (
    covered,
    intents,
    session,
    state,
)

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
