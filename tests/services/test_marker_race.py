"""The in-flight marker on PostgreSQL: its conditional UPDATE lets exactly one of eight
racing threads (eight connections, eight transactions) take it.

On SQLite writers are serialized by the file lock; PostgreSQL runs the UPDATEs truly
concurrently under READ COMMITTED, where the row lock and the re-check of the WHERE
clause after a concurrent update are what make "exactly one" hold.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from summaries.marker import marker_active, marker_release, marker_take
from summaries.state import summary_in_flight_until
from tests.fixtures.summary_state import in_flight_set
from transcripts.models import Slot
from transcripts.services import session_create

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

THREADS = 8
ROUNDS = 10


def race(fn: Callable[[int], Any], threads: int = THREADS) -> list[Any]:
    """``fn(i)`` in ``threads`` threads released together; each closes its own connection."""
    barrier = threading.Barrier(threads)
    results: list[Any] = [None] * threads
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = fn(i)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in pool), "a racing thread hung"
    assert not errors, errors
    return results


@pytest.fixture
def slot(services_home, on_postgres) -> Slot:
    return session_create(name="racy", app=None)


def test_exactly_one_of_eight_threads_takes_the_marker(slot):
    for _ in range(ROUNDS):
        tokens = race(lambda _: marker_take(slot.pk))

        taken = [t for t in tokens if t is not None]
        assert len(taken) == 1, tokens
        slot.refresh_from_db()
        assert summary_in_flight_until(slot) == taken[0]
        assert marker_active(slot)
        marker_release(slot.pk, taken[0])
        slot.refresh_from_db()
        assert summary_in_flight_until(slot) is None


def test_exactly_one_takes_an_expired_marker_and_only_the_holder_releases(slot):
    past = timezone.now() - dt.timedelta(seconds=5)
    in_flight_set(slot.pk, past)

    tokens = race(lambda _: marker_take(slot.pk))

    taken = [t for t in tokens if t is not None]
    assert len(taken) == 1, tokens
    # The dead pass's token (the old expiry) releases nothing.
    marker_release(slot.pk, past)
    slot.refresh_from_db()
    assert summary_in_flight_until(slot) == taken[0]
    # Releases racing with takes: the holder's release lands once, and afterwards at
    # most one new taker holds the marker.
    holder = taken[0]

    def release_or_take(i: int) -> dt.datetime | None:
        if i == 0:
            marker_release(slot.pk, holder)
            return None
        return marker_take(slot.pk)

    results = race(release_or_take)
    slot.refresh_from_db()
    winners = [t for t in results if t is not None]
    assert len(winners) <= 1, results
    assert summary_in_flight_until(slot) == (winners[0] if winners else None)
    # Free again (released, or taken by at most one): the next race has one winner.
    if winners:
        marker_release(slot.pk, winners[0])
    assert len([t for t in race(lambda _: marker_take(slot.pk)) if t is not None]) == 1
