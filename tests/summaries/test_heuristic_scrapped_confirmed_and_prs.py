"""State from what was said: a whole piece of work
scrapped by name, the person confirming with "looks right now on ...", and a pull request
reported as made in the assistant's words in any language."""

from __future__ import annotations

import pytest

from summaries.core.heuristic.evidence import Ev, reply_evidence
from tests.summaries.heuristic_cases import intents, session, state


def test_scrapping_the_work_by_name_drops_it() -> None:
    found = intents(
        session(
            ("u", "can we have a widget that shows the streak"),
            (
                "a",
                "Scaffolded a WidgetKit extension target; it needs an App Group and a store move.",
            ),
            ("u", "too risky before the release. scrap the widget for now, remove the target"),
            ("a", "Removed the HabbitWidget target and its files."),
        )
    )
    assert [state(i) for i in found] == ["dropped"]


def test_scrapping_a_column_is_not_dropping_the_work() -> None:
    found = intents(
        session(
            ("u", "add an orders export with customer name, vat and total columns"),
            ("a", "Added the export with the three columns; tests pass."),
            ("u", "scrap the vat column, finance has it elsewhere"),
            ("a", "Removed the vat column; 12 tests passed."),
        )
    )
    assert state(found[-1]) != "dropped"


def test_looks_right_now_on_the_devices_verifies() -> None:
    found = intents(
        session(
            ("u", "launch screen logo is huge on iPad"),
            ("a", "Changed the logo to a fixed 160pt width. Builds; check on the simulator?"),
            ("u", "looks right now on ipad and iphone"),
            ("a", "Committed and pushed."),
        )
    )
    assert state(found[0]) == "done"


@pytest.mark.parametrize(
    "reply",
    [
        "PR #287 skapad.",
        "PR #1290 against develop: https://example.com/pull/1290",
        "PR #12 erstellt",
    ],
)
def test_a_pull_request_reported_made_closes(reply: str) -> None:
    kinds = [e.kind for e in reply_evidence(reply, doc_intent=False)]
    assert Ev.CLOSE in kinds


def test_a_pull_request_only_named_does_not_close() -> None:
    kinds = [e.kind for e in reply_evidence("PR #12 still has a review comment.", doc_intent=False)]
    assert Ev.CLOSE not in kinds
