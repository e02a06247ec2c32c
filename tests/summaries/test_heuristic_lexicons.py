"""The offline summarizer, one rule family at a time: Generalization rules: evidence lexicons organised by meaning (a family of phrasings, never one session's sentence).

Split from the former test_heuristic.py; helpers in heuristic_cases.py. The labelled-set
figures live in test_heuristic_quality.py.
"""

import pytest

from tests.summaries.heuristic_cases import (
    intents,
    session,
    signals_of,
    state,
)


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
