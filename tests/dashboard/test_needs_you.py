""" "Needs you" lists every session that waits on the person (an open question or
decision, a failed last run, finished work nobody verified), and the badge on the session
page says the same: both go through ``summaries.core.intents.derive_state``."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from summaries.models import IntentSummary
from summaries.services import summary_generate

pytestmark = pytest.mark.django_db

EDIT = ("user", "Fix the parser in parse.py so it keeps rows with empty names")
CHANGED = ("assistant", "I changed parse.py to keep rows with empty names.")
ASKED = ("assistant", "I changed parse.py.\n\nShould empty names become NULL or an empty string?")


def run(result: str, exit_code: int) -> list[tuple[str, Any, dict[str, Any]]]:
    return [
        ("tool_call", "pytest -q tests/test_parse.py", {"tool": "bash"}),
        ("tool_result", result, {"tool": "bash", "exit_code": exit_code}),
    ]


@pytest.fixture
def sessions(make_session: Any, configure: Any) -> dict[str, Any]:
    from transcripts.services import session_append_row

    configure(enabled=True, min_user_turns=1)
    made: dict[str, list[tuple[Any, ...]]] = {
        "question": [EDIT, ASKED],
        "failed": [EDIT, CHANGED, *run("1 failed, 4 passed in 0.2s", 1)],
        "passed": [EDIT, CHANGED, *run("5 passed in 0.12s", 0)],
    }
    slots = {}
    for name, rows in made.items():
        slot = make_session(name, title=f"{name} session")
        for row in rows:
            role, content, *meta = row
            session_append_row(
                key=slot.session.key, role=role, content=content, meta=meta[0] if meta else None
            )
        summary_generate(slot_name=name, force=True)
        slots[name] = slot
    return slots


def listed(client: Client, query: str) -> set[str]:
    body = client.get("/" + query).content.decode()
    return {name for name in ("question", "failed", "passed") if f"{name} session" in body}


def badges(client: Client, name: str) -> list[str]:
    body = client.get(f"/s/{name}/summary/").json()
    return [intent["state"] for intent in body["intents"]]


def test_needs_you_lists_an_open_question_and_a_failed_run_as_their_badges_say(
    client_in: Client, sessions: dict[str, Any]
) -> None:
    assert listed(client_in, "?state=needs-you") == {"question", "failed"}
    assert badges(client_in, "question") == ["needs-you"]
    assert badges(client_in, "failed") == ["needs-you"]
    assert badges(client_in, "passed") == ["done"]


def test_a_summary_stored_under_the_old_rule_is_refiled_by_the_migration(
    client_in: Client, sessions: dict[str, Any]
) -> None:
    from importlib import import_module

    from django.apps import apps

    IntentSummary.objects.update(states="in-progress")  # as the old rule stored them
    assert listed(client_in, "?state=needs-you") == set()
    migration = import_module("summaries.migrations.0004_states_waiting_on_you")
    migration.states_recompute(apps, None)
    assert listed(client_in, "?state=needs-you") == {"question", "failed"}
