"""A test run in a side turn (the person setting a standing rule, or asking aside) checks
the code the intent in hand changed: the demo's "--since" intent read "Not run since the
last change" next to a reply that ran the suite green."""

from __future__ import annotations

from tests.summaries.heuristic_cases import intents, session, state

CHANGE = (
    "u",
    "Now let's add a --since flag to the export command so I can export only recent orders.",
)
MADE = ("a", "Added --since to export_orders; it filters on created_at. Tests not run yet.")
RULE = ("u", "Remember: always run make lint after changing the CLI, CI rejects it otherwise.")


def test_a_green_run_in_a_rule_turn_verifies_the_intent_in_hand() -> None:
    [intent] = intents(session(CHANGE, MADE, RULE, ("a", "Noted. Ran pytest: 51 passed.")))
    assert intent["verified"] is True
    assert state(intent) == "done"
    assert "Not run since the last change." not in intent["progress"]


def test_a_red_run_in_a_rule_turn_leaves_it_failing() -> None:
    [intent] = intents(
        session(CHANGE, MADE, RULE, ("a", "Noted. Ran pytest: 2 failed, 49 passed."))
    )
    assert intent["verified"] is False
    assert state(intent) != "done"


def test_only_runs_count_from_a_side_turn() -> None:
    """A change the assistant reports in a side turn is not this intent's work."""
    [intent] = intents(
        session(
            CHANGE,
            ("a", "Added --since to export_orders. Ran pytest: 51 passed."),
            RULE,
            ("a", "Noted. I also updated the lint config."),
        )
    )
    assert intent["verified"] is True


def test_a_tally_with_failures_is_a_red_run_whatever_its_order() -> None:
    """ "2 failed, 49 passed" used to read as a pass: the passed count came last."""
    for tally in ("2 failed, 49 passed", "49 passed, 1 error"):
        [intent] = intents(session(CHANGE, ("a", f"Added --since. Ran pytest: {tally}.")))
        assert intent["verified"] is False, tally
    [intent] = intents(session(CHANGE, ("a", "Added --since. Ran pytest: 51 passed, 0 failed.")))
    assert intent["verified"] is True
