"""The turn loop: start a turn, append rows, revise a row, end the turn (the one
automatic summary dispatch site)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from summaries.core.sidecar import INTENTS, sidecar_path
from tests.fixtures.summaries import CountingBackend
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot

from .conftest import SECRET, Persona, error_of

URL = "/api/chat/slots/s1"


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app, turns=0)


@pytest.fixture
def draft(owner: Persona, s1: Slot) -> str:
    """The ts of an assistant row "draft" in s1, for a revision to target."""
    response = owner.call("POST", f"{URL}/rows", {"role": "assistant", "content": "draft"})
    assert response.status_code == 201
    return str(json.loads(response.content)["ts"])


def refusal(owner: Persona, store: TranscriptStore, path: str, body: Any) -> tuple[int, str]:
    """POST ``body`` to ``path``: the error's (status, code), asserting it wrote nothing."""
    before = store.path("dashboard:s1").read_bytes()
    response = owner.call("POST", path, body)
    status_and_code = response.status_code, error_of(response)["code"]
    assert store.path("dashboard:s1").read_bytes() == before
    return status_and_code


def rows_on_disk(store: TranscriptStore, key: str = "dashboard:s1") -> list[dict[str, Any]]:
    lines = store.path(key).read_bytes().splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_start_a_turn_returns_the_user_rows_ts(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    response = owner.call("POST", f"{URL}/turns", {"content": "Add a logout button."})
    assert response.status_code == 201
    body = json.loads(response.content)
    assert set(body) == {"ts"}
    rows = rows_on_disk(store)
    assert rows[-1]["role"] == "user"
    assert rows[-1]["content"] == "Add a logout button."
    assert rows[-1]["ts"] == body["ts"]
    slot = json.loads(owner.call("GET", URL).content)
    assert slot["running"] is True
    assert slot["user_turns"] == 1


def test_a_second_start_while_running_is_409_and_writes_nothing(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    assert owner.call("POST", f"{URL}/turns", {"content": "first"}).status_code == 201
    second = {"content": "second"}
    assert refusal(owner, store, f"{URL}/turns", second) == (409, "turn_running")
    assert owner.call("POST", f"{URL}/turns/end", {"stop_reason": "end_turn"}).status_code == 200
    assert owner.call("POST", f"{URL}/turns", {"content": "second"}).status_code == 201


def test_a_failed_start_does_not_leave_the_turn_running(owner: Persona, s1: Slot) -> None:
    """A start the store refuses (a lone surrogate cannot be UTF-8) frees the slot again."""
    response = owner.call("POST", f"{URL}/turns", raw=b'{"content": "bad \\ud800 text"}')
    assert 400 <= response.status_code < 500
    error_of(response)
    assert Slot.objects.get(name="s1").running is False
    assert owner.call("POST", f"{URL}/turns", {"content": "fine"}).status_code == 201


@pytest.mark.parametrize("body", [{}, {"content": ""}, {"content": 5}, {"content": None}])
def test_start_with_a_bad_body_is_422(owner: Persona, s1: Slot, body: dict[str, Any]) -> None:
    response = owner.call("POST", f"{URL}/turns", body)
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"
    assert Slot.objects.get(name="s1").running is False


def test_rows_are_appended_and_non_user_content_is_redacted(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    answer = owner.call(
        "POST",
        f"{URL}/rows",
        {"role": "assistant", "content": f"your token is {SECRET}", "meta": {"note": SECRET}},
    )
    assert answer.status_code == 201
    ts = json.loads(answer.content)["ts"]
    tool = owner.call("POST", f"{URL}/rows", {"role": "tool_result", "content": SECRET})
    assert tool.status_code == 201
    mine = owner.call("POST", f"{URL}/rows", {"role": "user", "content": f"mine: {SECRET}"})
    assert mine.status_code == 201
    raw = store.path("dashboard:s1").read_bytes()
    rows = rows_on_disk(store)
    assert [r["role"] for r in rows] == ["assistant", "tool_result", "user"]
    assert rows[0]["ts"] == ts
    assert SECRET not in json.dumps(rows[:2])
    assert rows[2]["content"] == f"mine: {SECRET}"  # a person's own words are kept verbatim
    assert raw.count(SECRET.encode()) == 1
    assert rows[0]["ts"] < rows[1]["ts"] < rows[2]["ts"]
    assert Session.objects.get(key="dashboard:s1").row_count == 3


@pytest.mark.parametrize(
    "body",
    [
        {"content": "x"},
        {"role": "assistant"},
        {"role": "bogus", "content": "x"},
        {"role": "assistant", "content": 5},
        {"role": "assistant", "content": "x", "meta": "not an object"},
        {"role": "assistant", "content": "x", "meta": [1, 2]},
    ],
)
def test_rows_with_a_bad_body_are_422_and_write_nothing(
    owner: Persona, s1: Slot, store: TranscriptStore, body: dict[str, Any]
) -> None:
    assert refusal(owner, store, f"{URL}/rows", body) == (422, "invalid_request")


def test_a_revision_changes_a_row_in_the_folded_transcript(
    owner: Persona, draft: str, store: TranscriptStore
) -> None:
    response = owner.call(
        "POST", f"{URL}/rows/{draft}/revisions", {"patch": {"content": f"final {SECRET}"}}
    )
    assert response.status_code == 201
    revision_ts = json.loads(response.content)["ts"]
    assert revision_ts > draft
    on_disk = rows_on_disk(store)
    assert on_disk[-1]["_type"] == "revision"
    assert on_disk[-1]["target_ts"] == draft
    assert SECRET not in store.path("dashboard:s1").read_text()  # patches are redacted too
    folded = json.loads(owner.call("GET", f"{URL}/transcript").content)
    assert len(folded["rows"]) == 1
    assert folded["rows"][0]["ts"] == draft
    assert folded["rows"][0]["content"].startswith("final ")
    assert folded["report"]["revisions"] == 1


def test_a_revision_of_an_unknown_row_is_404_row_not_found(
    owner: Persona, s1: Slot, store: TranscriptStore
) -> None:
    unknown = f"{URL}/rows/2026-01-01T00:00:00.000001+00:00/revisions"
    assert refusal(owner, store, unknown, {"patch": {"content": "x"}}) == (404, "row_not_found")


@pytest.mark.parametrize(
    "patch",
    [
        {"ts": "2030-01-01T00:00:00+00:00"},
        {"_type": "metadata"},
        {"content": "x", "ts": "2030-01-01T00:00:00+00:00"},
        {"_after_ts": 5},
    ],
)
def test_a_revision_may_not_change_ts_or_type(
    owner: Persona, draft: str, store: TranscriptStore, patch: dict[str, Any]
) -> None:
    path = f"{URL}/rows/{draft}/revisions"
    assert refusal(owner, store, path, {"patch": patch}) == (422, "record_rejected")


@pytest.mark.parametrize("body", [{}, {"patch": {}}, {"patch": "x"}, {"patch": [1]}])
def test_a_revision_with_a_bad_body_is_422(
    owner: Persona, draft: str, store: TranscriptStore, body: dict[str, Any]
) -> None:
    path = f"{URL}/rows/{draft}/revisions"
    assert refusal(owner, store, path, body) == (422, "invalid_request")


class PassCounter:
    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.calls: list[str] = []
        self.outcomes: list[Any] = []

    def __call__(self, *, slot_name: str, force: bool = False, **kw: Any) -> Any:
        self.calls.append(slot_name)
        outcome = self.real(slot_name=slot_name, force=force, **kw)
        self.outcomes.append(outcome)
        return outcome


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> PassCounter:
    import summaries.tasks

    counter = PassCounter(summaries.tasks.summary_generate)  # type: ignore[attr-defined]
    monkeypatch.setattr(summaries.tasks, "summary_generate", counter)
    return counter


def run_turn(owner: Persona, question: str, answer: str, stop_reason: str = "end_turn") -> Any:
    assert owner.call("POST", f"{URL}/turns", {"content": question}).status_code == 201
    assert (
        owner.call("POST", f"{URL}/rows", {"role": "assistant", "content": answer}).status_code
        == 201
    )
    return owner.call("POST", f"{URL}/turns/end", {"stop_reason": stop_reason})


def test_turn_end_returns_the_slot_and_dispatches_exactly_one_pass(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    enabled_summaries: Path,
    passes: PassCounter,
    counting_backend: CountingBackend,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = run_turn(owner, "Please fix the login race (LOGIN-1).", "Fixed; tests pass.")
    assert first.status_code == 200
    body = json.loads(first.content)
    assert body["name"] == "s1"
    assert body["running"] is False
    assert body["user_turns"] == 1
    assert passes.calls == ["s1"]  # dispatched, and refused: too few turns
    assert counting_backend.calls == 0
    assert not sidecar_path(store.root, "dashboard:s1", INTENTS).exists()

    with django_capture_on_commit_callbacks(execute=True):
        second = run_turn(owner, "Now add a logout button (UI-7).", "Added the button.")
    assert second.status_code == 200
    assert passes.calls == ["s1", "s1"]
    assert counting_backend.calls == 1
    assert sidecar_path(store.root, "dashboard:s1", INTENTS).exists()
    listing = json.loads(owner.call("GET", "/api/chat/slots").content)["slots"]
    assert listing[0]["summary"]
    summary = json.loads(owner.call("GET", f"{URL}/summary").content)
    assert summary["intents"]
    assert summary["stale"] is False


def test_turn_end_spends_nothing_when_summaries_are_off(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    passes: PassCounter,
    counting_backend: CountingBackend,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run_turn(owner, "one", "a")
        response = run_turn(owner, "two", "b")
    assert response.status_code == 200
    # Switched off, the queued pass ends at the gate's first rule (tasks.summary_run),
    # before the pass itself: nothing read, the model never called.
    assert passes.calls == []
    assert counting_backend.calls == 0
    assert not sidecar_path(store.root, "dashboard:s1", INTENTS).exists()


def test_turn_end_with_an_unclean_stop_stores_no_summary(
    owner: Persona,
    s1: Slot,
    store: TranscriptStore,
    enabled_summaries: Path,
    counting_backend: CountingBackend,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run_turn(owner, "Please fix the login race.", "Fixed.")
        response = run_turn(owner, "Add a logout button.", "Ran out of tokens", "max_tokens")
    assert response.status_code == 200
    assert counting_backend.calls == 0
    assert not sidecar_path(store.root, "dashboard:s1", INTENTS).exists()


@pytest.mark.parametrize("body", [{}, {"stop_reason": ""}, {"stop_reason": "x" * 65}])
def test_turn_end_with_a_bad_body_is_422(owner: Persona, s1: Slot, body: dict[str, Any]) -> None:
    assert owner.call("POST", f"{URL}/turns", {"content": "q"}).status_code == 201
    response = owner.call("POST", f"{URL}/turns/end", body)
    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"
    assert Slot.objects.get(name="s1").running is True
