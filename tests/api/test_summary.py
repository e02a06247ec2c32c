"""GET and POST /api/chat/slots/{slot}/summary: bodies, codes and generate_state."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from summaries.core.sidecar import INTENTS, ONE_LINE, claim_take, sidecar_path
from summaries.state import summary_in_flight_until
from tests.fixtures.summaries import CountingBackend
from tests.fixtures.summary_state import in_flight_set
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot

from .conftest import Persona, error_of

URL = "/api/chat/slots/s1/summary"
KEY = "dashboard:s1"
BODY_KEYS = {
    "enabled",
    "stale",
    "intents",
    "constraints",
    "generated_at",
    "user_turns",
    "last_activity",
    "generate_state",
    "covers_through_turn",
    "new_turns",
    "model",
}


def get(owner: Persona, url: str = URL) -> dict[str, Any]:
    response = owner.call("GET", url)
    assert response.status_code == 200, response.content
    body: dict[str, Any] = json.loads(response.content)
    assert set(body) == BODY_KEYS  # sig and gen are never returned
    return body


def post(owner: Persona, url: str = URL) -> Any:
    return owner.call("POST", url)


def sidecars(store: TranscriptStore, key: str = KEY) -> list[bool]:
    return [sidecar_path(store.root, key, kind).exists() for kind in (INTENTS, ONE_LINE)]


def assert_refused_for_free(
    owner: Persona, store: TranscriptStore, backend: CountingBackend, code: str
) -> None:
    """A POST is refused with 409 ``code`` before any model call or sidecar write."""
    response = post(owner)
    assert response.status_code == 409
    assert error_of(response)["code"] == code
    assert backend.calls == 0
    assert sidecars(store) == [False, False]


def assert_empty(body: dict[str, Any]) -> None:
    assert body["stale"] is False
    assert body["intents"] == []
    assert body["constraints"] == []
    assert body["generated_at"] is None
    assert body["user_turns"] is None
    assert body["last_activity"] is None
    assert body["covers_through_turn"] is None
    assert body["new_turns"] is None
    assert body["model"] is None


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app, turns=2)


def test_get_never_generates(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    enabled_summaries: Path,
    counting_backend: CountingBackend,
) -> None:
    for _ in range(3):
        body = get(owner)
        assert body["enabled"] is True
        assert body["generate_state"] == "ready"
        assert_empty(body)
    assert counting_backend.calls == 0
    assert sidecars(store) == [False, False]


def test_get_with_the_feature_off_serves_nothing_even_with_a_sidecar(
    owner: Persona, s1: Slot, store: TranscriptStore, configure: Callable[..., Path]
) -> None:
    configure(enabled=True)
    assert post(owner).status_code == 200
    assert get(owner)["intents"]
    configure(enabled=False)
    body = get(owner)
    assert body["enabled"] is False
    assert body["generate_state"] == "unavailable"
    assert_empty(body)
    assert sidecars(store) == [True, True]  # kept, just not served
    configure(enabled=True)
    assert get(owner)["intents"]  # and served again once switched back on


def test_get_with_no_config_file_is_off(owner: Persona, s1: Slot) -> None:
    body = get(owner)
    assert body["enabled"] is False
    assert_empty(body)


def test_post_stores_and_returns_the_summary(
    owner: Persona, s1: Slot, store: TranscriptStore, enabled_summaries: Path
) -> None:
    response = post(owner)
    assert response.status_code == 200
    body = json.loads(response.content)
    assert set(body) == BODY_KEYS
    assert body["enabled"] is True
    assert body["stale"] is False
    assert body["intents"]
    for intent in body["intents"]:
        assert intent["title"]
        assert intent["state"] in {"done", "needs-you", "in-progress", "dropped"}
    assert isinstance(body["constraints"], list)
    assert isinstance(body["generated_at"], float)
    assert body["user_turns"] == 2
    assert body["last_activity"]
    assert body["generate_state"] == "ready"
    assert body["covers_through_turn"] == 2
    assert body["new_turns"] == 0
    assert body["model"] == "heuristic"
    assert sidecars(store) == [True, True]
    assert get(owner) == body  # GET serves exactly what POST stored


def test_a_summary_goes_stale_after_an_append(
    owner: Persona, s1: Slot, store: TranscriptStore, enabled_summaries: Path
) -> None:
    assert post(owner).status_code == 200
    fresh = get(owner)
    assert (
        owner.call(
            "POST", "/api/chat/slots/s1/turns", {"content": "One more thing: add a logout button."}
        ).status_code
        == 201
    )
    stale = get(owner)
    assert stale["stale"] is True
    assert stale["intents"] == fresh["intents"]  # still served: "not regenerated yet"
    assert stale["covers_through_turn"] == 2
    assert stale["new_turns"] == 1
    assert stale["generate_state"] == "ready"  # a running turn is deliberately still ready


def test_generate_state_too_few_turns(
    owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path
) -> None:
    make_slot("s1", app=owner.app, turns=1)
    assert get(owner)["generate_state"] == "too_few_turns"


def test_generate_state_follows_min_user_turns(
    owner: Persona, s1: Slot, configure: Callable[..., Path]
) -> None:
    configure(enabled=True, min_user_turns=3)
    assert get(owner)["generate_state"] == "too_few_turns"
    configure(enabled=True, min_user_turns=2)
    assert get(owner)["generate_state"] == "ready"


@pytest.mark.parametrize("mode", ["incognito", "temporary"])
def test_generate_state_unavailable_for_restricted_sessions(
    owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path, mode: str
) -> None:
    make_slot("s1", app=owner.app, turns=3, memory_mode=mode)
    assert get(owner)["generate_state"] == "unavailable"


def test_generate_state_generating_while_a_pass_is_queued_or_running(
    owner: Persona, s1: Slot, enabled_summaries: Path
) -> None:
    in_flight_set(s1.pk, timezone.now() + dt.timedelta(minutes=5))
    assert get(owner)["generate_state"] == "generating"
    # One its pass never cleared (a killed worker) expires.
    in_flight_set(s1.pk, timezone.now() - dt.timedelta(seconds=1))
    assert get(owner)["generate_state"] == "ready"


def test_post_with_the_feature_off_is_409_summary_disabled(
    owner: Persona, s1: Slot, store: TranscriptStore, counting_backend: CountingBackend
) -> None:
    assert_refused_for_free(owner, store, counting_backend, "summary_disabled")


def test_post_during_a_turn_is_409_summary_turn_running(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    enabled_summaries: Path,
    counting_backend: CountingBackend,
) -> None:
    assert owner.call("POST", "/api/chat/slots/s1/turns", {"content": "more"}).status_code == 201
    assert_refused_for_free(owner, store, counting_backend, "summary_turn_running")


def test_post_while_a_pass_holds_the_claim_is_409_summary_in_flight(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    enabled_summaries: Path,
    counting_backend: CountingBackend,
) -> None:
    until = timezone.now() + dt.timedelta(minutes=5)
    in_flight_set(s1.pk, until)
    claim = claim_take(store.root, KEY)
    assert claim is not None
    try:
        assert_refused_for_free(owner, store, counting_backend, "summary_in_flight")
    finally:
        claim.release()
    assert summary_in_flight_until(Slot.objects.get(pk=s1.pk)) == until  # not someone else's


@pytest.mark.parametrize(
    ("turns", "mode", "code"),
    [
        (1, "", "summary_too_few_turns"),
        (3, "incognito", "summary_unavailable"),
        (3, "temporary", "summary_unavailable"),
        (3, "INCOGNITO", "summary_unavailable"),
    ],
    ids=["too-few-turns", "incognito", "temporary", "INCOGNITO"],
)
def test_post_with_too_few_turns_or_for_a_restricted_session_is_a_free_409_naming_why(
    owner: Persona,
    make_slot: Callable[..., Slot],
    store: TranscriptStore,
    enabled_summaries: Path,
    counting_backend: CountingBackend,
    turns: int,
    mode: str,
    code: str,
) -> None:
    make_slot("s1", app=owner.app, turns=turns, memory_mode=mode)
    assert_refused_for_free(owner, store, counting_backend, code)


def test_a_second_post_on_an_unchanged_transcript_is_free(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    enabled_summaries: Path,
    counting_backend: CountingBackend,
) -> None:
    first = post(owner)
    second = post(owner)
    assert first.status_code == second.status_code == 200
    assert counting_backend.calls == 1
    assert json.loads(second.content) == json.loads(first.content)
    # A new turn makes the next explicit request spend again.
    owner.call("POST", "/api/chat/slots/s1/turns", {"content": "Please also add a logout button."})
    owner.call("POST", "/api/chat/slots/s1/rows", {"role": "assistant", "content": "Added it."})
    owner.call("POST", "/api/chat/slots/s1/turns/end", {"stop_reason": "end_turn"})
    third = post(owner)
    assert third.status_code == 200
    assert counting_backend.calls == 2
    assert json.loads(third.content)["covers_through_turn"] == 3


def test_post_lifts_the_stop_reason_gate(
    owner: Persona, s1: Slot, enabled_summaries: Path, counting_backend: CountingBackend
) -> None:
    """An explicit request is consent: a turn that ended unclean can still be summarized."""
    Slot.objects.filter(pk=s1.pk).update(last_stop_reason="max_tokens")
    assert post(owner).status_code == 200
    assert counting_backend.calls == 1


def test_a_corrupt_sidecar_reads_as_no_summary(
    owner: Persona, s1: Slot, store: TranscriptStore, enabled_summaries: Path
) -> None:
    assert post(owner).status_code == 200
    sidecar_path(store.root, KEY, INTENTS).write_text("{not json")
    body = get(owner)
    assert body["enabled"] is True
    assert_empty(body)
