"""Every slot route raced against a DELETE of the same slot, for real: threads released
together on PostgreSQL (one connection and one transaction each, so nothing serializes
them the way SQLite's file lock would), requests through the whole Django stack.

Each request either wins (its usual answer) or meets the deleted slot, which is the 404
``slot_not_found`` of a slot that was never there: never a 500, never a 409 that blames a
running turn or an unavailable summary. Afterwards the slot is gone for good: GET is
404, no transcript, archive or sidecar is back on disk and no mirror row remains.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from tests.fixtures.delete_race import ROUTE_IDS, ROUTES, Route, leftovers, send
from tests.fixtures.slots import add_exchanges
from transcripts.models import Slot
from transcripts.services import app_create, session_create

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

PAIRS = 20  # concurrent (route, DELETE) pairs per route: 40 threads, 40 connections


def race(calls: list[Any]) -> list[Any]:
    """Run every call in its own thread, all released by one barrier."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = calls[i]()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a racing request hung"
    assert not errors, errors
    return results


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_a_route_racing_a_delete_of_its_slot_never_answers_500(
    services_home: Any, on_postgres: None, route: Route
) -> None:
    app, token = app_create(name="racer")
    names = [f"{route.name}-{i}" for i in range(PAIRS)]
    stamps: dict[str, list[str]] = {}
    for name in names:
        slot = session_create(name=name, app=app)
        stamps[name] = add_exchanges(slot, 2)
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")

    def client() -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    calls: list[Any] = []
    for name in names:
        calls.append(lambda name=name: send(client(), route, name, stamps[name]))
        calls.append(lambda name=name: client().delete(f"/api/chat/slots/{name}"))
    responses = race(calls)

    outcomes: Counter[str] = Counter()
    for answer in responses[0::2]:
        body = json.loads(answer.content) if answer.content else {}
        outcomes[f"{answer.status_code} {body.get('code', '')}".strip()] += 1
    print(f"{route.name}: {dict(outcomes)}")  # how the pairs split (-s shows it)
    # The route won (its usual answer) or met the deleted slot: nothing else, ever.
    assert set(outcomes) <= {str(route.ok), "404 slot_not_found"}, dict(outcomes)
    for name, deleted in zip(names, responses[1::2], strict=True):
        assert deleted.status_code in (204, 404), (name, deleted.status_code)
        assert client().get(f"/api/chat/slots/{name}").status_code == 404, name
        assert leftovers(name) == [], name
