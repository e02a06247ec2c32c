"""The dirty mark is a lease: a write holding it makes POST summary a free 409
``summary_busy`` (checked before the model call), and an expired one (what a writer
killed mid-write leaves) holds nothing. The real SIGKILLed writer is
tests/services/test_dirty_lease_crash.py."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from django.utils import timezone

from summaries.core.sidecar import INTENTS, sidecar_path
from tests.fixtures.summaries import CountingBackend
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import slot_append_row
from transcripts.services.dirty import dirty_release, dirty_take

from .conftest import Persona, error_of

URL = "/api/chat/slots/s1/summary"


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path) -> Slot:
    return make_slot("s1", app=owner.app, turns=2)


def test_post_while_a_write_holds_the_lease_is_a_free_409_summary_busy(
    owner: Persona, s1: Slot, store: TranscriptStore, counting_backend: CountingBackend
) -> None:
    dirty_take(s1.pk)

    for _ in range(3):
        response = owner.call("POST", URL)
        assert response.status_code == 409
        assert error_of(response)["code"] == "summary_busy"
    assert counting_backend.calls == 0  # quiescence is checked before spending
    assert not sidecar_path(store.root, s1.session.key, INTENTS).exists()


def test_an_expired_lease_left_by_a_dead_writer_holds_nothing(
    owner: Persona, s1: Slot, counting_backend: CountingBackend
) -> None:
    Slot.objects.filter(pk=s1.pk).update(dirty_until=timezone.now() - dt.timedelta(seconds=1))
    assert not Slot.objects.get(pk=s1.pk).dirty

    response = owner.call("POST", URL)

    assert response.status_code == 200, response.content
    assert json.loads(response.content)["intents"]
    assert counting_backend.calls == 1


def test_a_lease_is_cleared_only_by_the_writer_that_holds_it(s1: Slot) -> None:
    older = dirty_take(s1.pk)
    newer = dirty_take(s1.pk)
    assert newer > older

    dirty_release(s1.pk, older)  # an overlapping writer that took the lease earlier
    assert Slot.objects.get(pk=s1.pk).dirty

    dirty_release(s1.pk, newer)
    assert Slot.objects.get(pk=s1.pk).dirty_until is None


def test_a_write_replaces_a_dead_writers_lease_and_clears_it(s1: Slot) -> None:
    stale = timezone.now() + dt.timedelta(minutes=5)  # a killed writer's, still running
    Slot.objects.filter(pk=s1.pk).update(dirty_until=stale)

    slot_append_row(slot=s1, role="assistant", content="one more answer")

    assert Slot.objects.get(pk=s1.pk).dirty_until is None
