"""Constraint phrasings found on the blind batches (issue 11): rules said in other languages,
time windows, owners inside a request, renames whose name is in the next sentence."""

from __future__ import annotations

import pytest

from summaries.core.heuristic import summarize_turns
from tests.summaries.heuristic_cases import session


def constraints_of(*said: str) -> list[str]:
    rows: list[tuple[str, str]] = []
    for text in said:
        rows += [("u", text), ("a", "Done.")]
    found = summarize_turns(session(*rows))["constraints"]
    assert isinstance(found, list)
    return [str(c) for c in found]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # "always"/"never" in other languages, beside the command or flag they govern
        ("Und nach jeder Änderung bitte immer `make proxy-reload` statt restart.", "proxy-reload"),
        ("Au fait, le script doit toujours tourner avec --target test-pg, hein.", "test-pg"),
        ("le déploiement se fait avec `./deploy.sh staging`, jamais avec kubectl.", "deploy.sh"),
        # when something may happen
        ("any batch job against the primary runs only between 01:00 and 05:00 UTC", "01:00"),
        ("no, big job, only run on saturday when nobody use the warehouse", "saturday"),
        ("and deploys are frozen on fridays btw, so commit but don't deploy today", "fridays"),
        # a property the work must leave as it is, after ", but"
        ("Ok please make this change, but the admin must stay in english.", "english"),
        # the one sanctioned path, named
        ("yes always via the bastion, jump.example.internal. never direct", "jump.example"),
        ("ah yes, we push only to staging registry, the serving team promote", "staging"),
        # who owns what, even inside a request
        ("can you dedupe? but ask Minh before the schema change, he own that table", "Minh"),
        # a name corrected the other way round
        ("Also the container isn't called app, it's `resizer`.", "resizer"),
    ],
)
def test_a_standing_rule_found_on_the_blind_batches_is_a_constraint(text: str, needle: str) -> None:
    found = constraints_of(text)
    assert any(needle.lower() in c.lower() for c in found), found


def test_a_rename_keeps_the_name_said_in_the_next_sentence() -> None:
    found = constraints_of("right, channel was renamed. its #etl-alerts now, not data-alerts")
    assert any("#etl-alerts" in c for c in found), found


def test_a_window_stated_again_replaces_the_old_one() -> None:
    found = constraints_of(
        "Maintenance window is Sunday 02:00-04:00 CET. Plan the migration.",
        "update: the window moved to Saturday 23:00-01:00",
    )
    assert not any("Sunday" in c for c in found), found
    assert any("Saturday" in c for c in found), found


def test_asking_who_owns_something_states_no_owner() -> None:
    found = constraints_of("I'll ask Bram who owns the pager tomorrow")
    assert found == []


def test_a_short_turn_with_a_new_value_corrects_the_rule_just_stated() -> None:
    found = constraints_of(
        "run pending migrations. always w/ --lock-timeout=5s", "actually 3s. ops lowered it"
    )
    assert any("--lock-timeout=3s" in c for c in found), found
    assert not any("5s" in c for c in found), found
    # a question about the old value corrects nothing
    asked = constraints_of("the port is 5439, not 5432", "but it ran fine with 5432 before?")
    assert not any("5432" in c for c in asked), asked


def test_a_rule_said_of_she_keeps_who_she_is() -> None:
    said = "Agnieszka approved #415. Please merge it. For the record: she owns the refund code."
    found = constraints_of(said)
    assert any("Agnieszka" in c and "owns the refund code" in c for c in found), found


def test_a_preamble_before_a_colon_gives_way_to_the_rule() -> None:
    said = (
        "One note for the future, since this bit me before: migrations in this repo are always"
        " applied by the release pipeline, never by hand on staging or production, so please"
        " never run `alembic upgrade` against anything but your local database."
    )
    found = constraints_of(said)
    assert any(c.startswith("Migrations in this repo") and "alembic" in c for c in found), found


def test_a_value_corrected_later_replaces_the_rule_that_named_the_old_value() -> None:
    found = constraints_of(
        "please make the training on the gpu machine gpu-07 like always",
        "ah sorry, gpu-07 was dismissed in october, now is gpu-11. same user",
    )
    assert not any("gpu-07" in c for c in found), found
    assert any("gpu-11" in c for c in found), found


def test_two_values_side_by_side_correct_nothing_without_a_word_setting_them_apart() -> None:
    listed = constraints_of("two things. 1) remove the deprecated /v1/legacy-search 2) cache /v2")
    assert listed == [], listed
    found = constraints_of("The ticket is actually OPS-44, OPS-41 was the label printer.")
    assert any("OPS-44" in c for c in found), found
