"""The offline summarizer, one rule family at a time: Batches, hand-offs, runs under way, lexicons by meaning and more constraint phrasings.

Split from the former test_heuristic.py; helpers in heuristic_cases.py. The labelled-set
figures live in test_heuristic_quality.py.
"""

import pytest

from summaries.core.heuristic import summarize_turns
from tests.summaries.heuristic_cases import (
    intents,
    session,
    signals_of,
    state,
)


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
