"""Issue 12 item 4: a turn end answers at once; without a broker its summary pass runs
after the response on a bounded in-process worker; POST …/summary keeps its contract and
does not hold up the server's other requests.

Event-based only: a model call blocked on an Event shows what waits for what; no clock.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest
from django.db import connections

from summaries.core.sidecar import INTENTS, read_strict
from summaries.worker import summary_worker_drain, summary_worker_pending
from tests.fixtures.personas import app_with_client
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot

from .conftest import PushRecorder, RecordingBackend

pytestmark = pytest.mark.django_db(transaction=True)


def _post(client: Any, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json.dumps(body), content_type="application/json")


def _turn(client: Any, slot: str, n: int) -> Any:
    """One user turn with an answer; returns the turn end's response."""
    assert (
        _post(client, f"/api/chat/slots/{slot}/turns", {"content": f"ask {n}"}).status_code == 201
    )
    row = {"role": "assistant", "content": f"answer {n}"}
    assert _post(client, f"/api/chat/slots/{slot}/rows", row).status_code == 201
    return _post(client, f"/api/chat/slots/{slot}/turns/end", {"stop_reason": "end_turn"})


def _pass_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("summary-pass")]


@pytest.fixture
def gated(backend: RecordingBackend) -> RecordingBackend:
    backend.gate = threading.Event()
    return backend


def test_the_turn_end_answers_while_its_pass_is_still_blocked(
    store: TranscriptStore,
    configure: Any,
    summary_worker: None,
    gated: RecordingBackend,
    pushes: PushRecorder,
) -> None:
    configure(enabled=True, min_user_turns=1)
    _app, _token, client = app_with_client("runner")
    assert _post(client, "/api/chat/slots", {"name": "w1"}).status_code == 201

    ended = _turn(client, "w1", 1)

    # The response is here; the model call of its pass has started and is still blocked.
    assert ended.status_code == 200
    assert json.loads(ended.content)["running"] is False
    assert gated.entered.wait(timeout=30), "the turn end never started its pass"
    assert gated.gate is not None
    assert not gated.gate.is_set()
    key = Slot.objects.get(name="w1").session.key
    assert read_strict(store, key, INTENTS) is None
    assert pushes.slots == []

    gated.gate.set()
    assert summary_worker_drain(timeout=60)
    assert read_strict(store, key, INTENTS) is not None
    assert pushes.slots == ["w1"]  # the panel still learns of it from its frame


def test_turn_ends_do_not_pile_up_threads_or_passes(
    store: TranscriptStore,
    configure: Any,
    settings: Any,
    summary_worker: None,
    gated: RecordingBackend,
) -> None:
    configure(enabled=True, min_user_turns=1)
    settings.KIROCREW_SUMMARY_WORKERS = 1
    settings.KIROCREW_SUMMARY_QUEUE = 3
    _app, _token, client = app_with_client("runner")
    names = [f"p{i}" for i in range(6)]
    for name in names:
        assert _post(client, "/api/chat/slots", {"name": name}).status_code == 201

    assert _turn(client, "p0", 1).status_code == 200
    assert gated.entered.wait(timeout=30)  # p0's pass holds the only worker thread
    for n in range(2, 12):  # ten more turn ends of the same slot: one queued pass
        assert _turn(client, "p0", n).status_code == 200
    assert summary_worker_pending() == 2
    for name in names[1:]:  # five more slots, a queue of three: two passes dropped
        assert _turn(client, name, 1).status_code == 200
    assert summary_worker_pending() == 1 + 3
    assert len(_pass_threads()) <= 1

    assert gated.gate is not None
    gated.gate.set()
    assert summary_worker_drain(timeout=120)
    assert gated.calls == 1 + 3  # p0 twice (the queued pass saw all 11 turns), p1, p2
    covered = read_strict(store, Slot.objects.get(name="p0").session.key, INTENTS)
    assert covered is not None
    assert covered["user_turns"] == 11
    assert len(_pass_threads()) <= 1


def test_with_a_broker_the_turn_end_queues_the_celery_task(
    make_slot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from summaries import tasks

    queued: list[str] = []
    monkeypatch.setitem(tasks.summarize_slot.app.conf, "task_always_eager", False)
    monkeypatch.setattr(tasks.summarize_slot, "delay", queued.append)
    monkeypatch.setattr("summaries.worker.summary_submit", lambda *a: pytest.fail("worker used"))
    tasks.summary_dispatch("s1")
    assert queued == ["s1"]


async def test_a_blocked_post_summary_does_not_hold_up_other_requests(
    store: TranscriptStore, configure: Any, backend: RecordingBackend
) -> None:
    """Through the ASGI application daphne serves, in one event loop: while POST
    …/summary waits in its model call, GET /api/health answers; then the POST answers
    with the stored body (the seed's contract)."""
    from asgiref.sync import sync_to_async

    from kirocrew_site.asgi import application

    def setup() -> str:
        configure(enabled=True, min_user_turns=1)
        _app, token, client = app_with_client("runner")
        assert _post(client, "/api/chat/slots", {"name": "g1"}).status_code == 201
        assert _turn(client, "g1", 1).status_code == 200  # inline here: a current summary
        # One more row: the summary is behind, so the forced POST calls the model again.
        row = {"role": "assistant", "content": "one more thing"}
        assert _post(client, "/api/chat/slots/g1/rows", row).status_code == 201
        connections.close_all()  # this pool thread's own connection
        return token

    token = await sync_to_async(setup, thread_sensitive=False)()
    gated = backend
    gated.gate = threading.Event()  # from here on the model call waits for the test
    gated.entered.clear()
    headers = {"Authorization": f"Bearer {token}"}
    transport = httpx.ASGITransport(app=application)  # type: ignore[arg-type]
    async with httpx.AsyncClient(
        transport=transport, base_url="http://testserver", headers=headers, timeout=60
    ) as client:
        post = asyncio.ensure_future(client.post("/api/chat/slots/g1/summary"))
        while not gated.entered.is_set():
            assert not post.done(), post.result().text
            await asyncio.sleep(0.01)
        health = await client.get("/api/health")
        assert health.status_code == 200
        assert not post.done()  # the model call is still blocked
        assert gated.gate is not None
        gated.gate.set()
        answered = await post
    assert answered.status_code == 200, answered.text
    body = answered.json()
    assert body["intents"]
    assert body["enabled"] is True


def test_a_pass_queued_by_a_request_starts_when_its_response_is_closed() -> None:
    """A pass held by ``summary_worker_hold()`` starts at Django's request_finished (sent
    once the response went out), so the pass never competes with the request it follows."""
    from django.core.signals import request_finished

    from summaries.worker import summary_submit, summary_worker_hold

    ran: list[str] = []
    with summary_worker_hold():
        assert summary_submit("held", ran.append)
        assert summary_submit("held", ran.append)  # the same slot twice: one pass
    assert summary_worker_pending() == 0  # held, not queued: the response is still open
    request_finished.send(sender=None)
    assert summary_worker_drain(timeout=30)
    assert ran == ["held"]


def test_every_request_holds_its_passes_until_its_response_is_closed() -> None:
    """No route asks for the hold: Django's request_started opens it on the thread that
    serves the request (the turn end's ``turn_ended`` receiver queues the pass there)."""
    from django.core.signals import request_finished, request_started

    from summaries.worker import summary_submit

    ran: list[str] = []
    request_started.send(sender=None)
    try:
        assert summary_submit("in-request", ran.append)
        assert summary_worker_pending() == 0  # held: the response is still open
    finally:
        request_finished.send(sender=None)
    assert summary_worker_drain(timeout=30)
    assert ran == ["in-request"]

    assert summary_submit("no-request", ran.append)  # outside a request: queued at once
    assert summary_worker_drain(timeout=30)
    assert ran == ["in-request", "no-request"]
