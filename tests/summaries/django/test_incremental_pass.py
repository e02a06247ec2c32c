"""Incremental passes against a real loopback OpenAI-compatible server.

With a valid previous summary the pass sends the update prompt (the previous payload, the
turns since, their tool facts) and stores the merged reply; a reply the checks have to
correct is thrown away for a full pass; every ``KIROCREW_SUMMARY_FULL_PASS_EVERY`` passes
one is full anyway.
"""

from __future__ import annotations

import json

import pytest

from summaries.core.backends.openai import OpenAIBackend
from summaries.core.sidecar import read_strict
from summaries.services import PassOutcome, PassResult, summary_generate
from tests.fixtures.slots import add_exchanges, exchange
from tests.fixtures.summaries import use_backend
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

pytestmark = pytest.mark.django_db

STORED = PassOutcome(PassResult.STORED)
FIRST = {
    "title": "Fix login bug 0",
    "ranges": [[1, 2]],
    "status": "completed",
    "verified": None,
    "origin_turn": 1,
}
NEW = {"title": "Fix login bug 2", "ranges": [[3, 3]], "status": "active", "origin_turn": 3}


def _reply(payload: object) -> Behaviour:
    return Behaviour.reply(json.dumps(payload))


def _prompt(server: FakeOpenAIServer, n: int) -> str:
    return str(server.requests[n].json["messages"][1]["content"])


@pytest.fixture
def summarized(enabled_summaries, make_slot, store, fake_openai, monkeypatch):
    """A slot whose first (full) pass stored FIRST; then one more exchange."""
    slot = make_slot(turns=2)
    use_backend(monkeypatch, OpenAIBackend("m", fake_openai.base_url, None, retry_backoff=0.0))
    fake_openai.enqueue(_reply({"intents": [FIRST], "constraints": []}))
    assert summary_generate(slot_name="s1") == STORED
    data = read_strict(store, slot.session.key)
    assert data is not None
    assert data["incremental_passes"] == 0
    add_exchanges(slot, 1, start=2)
    return slot


def test_a_pass_after_new_turns_sends_the_update_and_stores_the_merge(
    summarized, store, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.enqueue(_reply({"intents": [{"id": 1}, NEW]}))

    assert summary_generate(slot_name="s1") == STORED

    assert len(fake_openai.requests) == 2
    update = _prompt(fake_openai, 1)
    assert update.startswith("UPDATE the intent summary")
    assert '"title":"Fix login bug 0"' in update  # the previous payload
    assert exchange(2)[0] in update  # the new turn
    assert exchange(0)[0] not in update  # not the whole session again
    assert len(update) < len(_prompt(fake_openai, 0))
    data = read_strict(store, summarized.session.key)
    assert data is not None
    assert [i["title"] for i in data["intents"]] == ["Fix login bug 2", "Fix login bug 0"]
    assert data["incremental_passes"] == 1
    assert data["user_turns"] == 3


def test_an_update_the_checks_correct_is_replaced_by_a_full_pass(
    summarized, store, fake_openai: FakeOpenAIServer
) -> None:
    lie = {**NEW, "ranges": [[3, 40]]}  # past the session's end
    full = {"intents": [FIRST, {**NEW, "title": "Fix login bug 2 (full)"}]}
    fake_openai.enqueue(_reply({"intents": [{"id": 1}, lie]}), _reply(full))

    assert summary_generate(slot_name="s1") == STORED

    assert len(fake_openai.requests) == 3
    assert not _prompt(fake_openai, 2).startswith("UPDATE")  # the full prompt
    data = read_strict(store, summarized.session.key)
    assert data is not None
    assert data["intents"][0]["title"] == "Fix login bug 2 (full)"
    assert data["incremental_passes"] == 0


def test_every_nth_pass_is_a_full_one(
    summarized, store, fake_openai: FakeOpenAIServer, settings
) -> None:
    settings.KIROCREW_SUMMARY_FULL_PASS_EVERY = 2
    fake_openai.enqueue(_reply({"intents": [{"id": 1}, NEW]}))
    assert summary_generate(slot_name="s1") == STORED
    assert _prompt(fake_openai, 1).startswith("UPDATE")

    add_exchanges(summarized, 1, start=3)
    fake_openai.enqueue(_reply({"intents": [FIRST, NEW]}))
    assert summary_generate(slot_name="s1") == STORED

    assert not _prompt(fake_openai, 2).startswith("UPDATE")
    data = read_strict(store, summarized.session.key)
    assert data is not None
    assert data["incremental_passes"] == 0
