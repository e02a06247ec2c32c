"""Routines run over a new day, an order about other
things once a check was answered, an "also" aside in other words (each case fails with
its feature weighted 0), and rules shaped without the alternative they reject."""

from __future__ import annotations

import pytest

from summaries.core.heuristic import summarize_turns
from tests.summaries.heuristic_cases import covered, intents, session

CHECK = "run ingest-check for 2026-11-15 and tell me if anything is missing"
PASSED = "The check passed. 2026-11-15: all 24 hourly partitions present, nothing missing."


def test_another_day_in_the_same_sitting_extends_the_run() -> None:
    # no day-scale pause: "and 11-16" widens the run in hand, it is no new morning's run
    turns = session(
        ("u", CHECK),
        ("a", PASSED),
        ("u", "2026-11-16"),
        ("a", "The check passed. 2026-11-16: 24/24 partitions present."),
    )
    assert [covered(i) for i in intents(turns)] == [{1, 2}]


def test_an_order_about_other_things_after_an_answered_check_opens_work() -> None:
    turns = session(
        ("u", "run the ingest check for yesterday please"),
        ("a", "The check passed. All 24 partitions present, max lag 4 minutes."),
        ("u", "someone merged the compactor fix. deploy compactor-prod to the data cluster"),
        ("a", "Synced compactor-prod to sha-3f9c1e2, healthy."),
    )
    assert [covered(i) for i in intents(turns)] == [{1}, {2}]


def test_an_order_after_changed_work_still_refines_it() -> None:
    # the same order after work that changed something is more of that work (not a check)
    turns = session(
        ("u", "fix the k-way merge in crates/compactor/src/merge.rs, it loads every file"),
        ("a", "Implemented streaming k-way merge in merge.rs. Tests passed."),
        ("u", "deploy compactor-prod to the data cluster"),
        ("a", "Synced compactor-prod to sha-3f9c1e2, healthy."),
    )
    assert [covered(i) for i in intents(turns)] == [{1, 2}]


def test_an_also_aside_in_other_words_after_a_result_is_other_work() -> None:
    turns = session(
        ("u", CHECK),
        ("a", PASSED),
        ("u", "cool. also the events-compactor job has been OOMing on fridays, dig into it"),
        ("a", "merge.rs loads every input file into one Vec before sorting."),
    )
    assert [covered(i) for i in intents(turns)] == [{1}, {2}]


def test_an_also_that_names_the_work_in_hand_adds_to_it() -> None:
    turns = session(
        ("u", CHECK),
        ("a", PASSED),
        ("u", "cool. also print the partitions' max lag in the ingest-check output"),
        ("a", "Added the max lag column to ingest-check output."),
    )
    assert [covered(i) for i in intents(turns)] == [{1, 2}]


def constraints_of(text: str) -> list[str]:
    found = summarize_turns(session(("u", text), ("a", "Done.")))["constraints"]
    assert isinstance(found, list)
    return [str(c) for c in found]


@pytest.mark.parametrize(
    ("text", "kept", "left_out"),
    [
        # the rejected alternative in several words, and the story of why, go
        (
            "Our rollback is always restoring the pre-upgrade backup into a new instance,"
            " not point-in-time recovery, because PITR has bitten us before.",
            "backup",
            "point-in-time",
        ),
        # "`new` not old" with no comma: the value after the quoted one is the old one
        (
            "The warehouse table is always `analytics.churn_features_v3` not"
            " warehouse.churn_features.",
            "churn_features_v3",
            "warehouse.churn_features",
        ),
        # ", nobody does X" restates the rule by what it forbids
        (
            "All our terraform runs go through Atlantis on the PR, nobody runs plan against"
            " prod state from a laptop.",
            "Atlantis",
            "laptop",
        ),
    ],
)
def test_a_rule_keeps_what_holds_and_leaves_out_the_rejected_way(
    text: str, kept: str, left_out: str
) -> None:
    found = constraints_of(text)
    assert any(kept in c for c in found), found
    assert not any(left_out in c for c in found), found
