"""A rewind that removes turns a stored summary covers: the summary no longer shows them,
a pass is queued for what is left, and a forced POST with too few turns left clears it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from summaries.core.sidecar import INTENTS, ONE_LINE, sidecar_path
from summaries.models import IntentSummary
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import session_rewind

from .conftest import Persona

URL = "/api/chat/slots/s1/summary"
KEY = "dashboard:s1"


def get(owner: Persona) -> dict[str, Any]:
    response = owner.call("GET", URL)
    assert response.status_code == 200, response.content
    body: dict[str, Any] = json.loads(response.content)
    return body


def cut_after_user_turn(store: TranscriptStore, n: int) -> str:
    """The ts of the last row of user turn ``n`` (1-based): rewinding there keeps n turns."""
    rows = store.read_session(KEY).rows
    users = [i for i, row in enumerate(rows) if row.get("role") == "user"]
    end = users[n] - 1 if n < len(users) else len(rows) - 1
    return str(rows[end]["ts"])


def summarized(owner: Persona, make_slot: Callable[..., Slot], turns: int) -> Slot:
    slot = make_slot("s1", app=owner.app, turns=turns)
    assert owner.call("POST", URL).status_code == 200
    assert get(owner)["covers_through_turn"] == turns
    return slot


def test_a_rewind_below_min_turns_hides_the_summary_and_a_forced_post_clears_it(
    owner: Persona,
    make_slot: Callable[..., Slot],
    store: TranscriptStore,
    enabled_summaries: Path,
) -> None:
    summarized(owner, make_slot, 3)
    session_rewind(key=KEY, after_ts=cut_after_user_turn(store, 1))  # one turn left

    body = get(owner)
    assert body["intents"] == []  # not the summary of turns that no longer exist
    assert body["generate_state"] == "too_few_turns"

    cleared = owner.call("POST", URL)
    assert cleared.status_code == 200, cleared.content  # not a 409 too_few_turns
    assert json.loads(cleared.content)["intents"] == []
    assert not sidecar_path(store.root, KEY, INTENTS).exists()
    assert not sidecar_path(store.root, KEY, ONE_LINE).exists()
    assert not IntentSummary.objects.filter(session__key=KEY).exists()


def test_a_rewind_queues_a_pass_that_summarizes_what_is_left(
    owner: Persona,
    make_slot: Callable[..., Slot],
    store: TranscriptStore,
    enabled_summaries: Path,
    django_capture_on_commit_callbacks: Any,
) -> None:
    summarized(owner, make_slot, 3)
    with django_capture_on_commit_callbacks(execute=True):
        session_rewind(key=KEY, after_ts=cut_after_user_turn(store, 2))

    body = get(owner)
    assert body["covers_through_turn"] == 2  # rewritten for the two turns left
    assert body["intents"]
    assert body["stale"] is False
