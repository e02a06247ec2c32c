"""A pass over an unchanged transcript answers "current" before it reads the session.

The sidecar is checked right after the identity snapshot: one valid for exactly this
sig + gen describes the transcript as it is now, and its ``user_turns`` is the count the
pass would make, so the gate and the turn mark need no byte of the session.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from summaries.core.sidecar import INTENTS, read_strict, sidecar_path
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_turn_mark, summary_turn_mark_set
from tests.fixtures.slots import add_exchanges
from tests.summaries.django.conftest import must
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot

pytestmark = pytest.mark.django_db

STORED = PassOutcome(PassResult.STORED)
CURRENT = PassOutcome(PassResult.CURRENT)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which of the session's readers the pass called."""
    seen: list[str] = []
    real = TranscriptStore.read_session

    def spy(self: TranscriptStore, key: str, **kw: Any) -> Any:
        seen.append("read_session")
        return real(self, key, **kw)

    monkeypatch.setattr(TranscriptStore, "read_session", spy)
    return seen


def mark() -> int:
    return summary_turn_mark(Slot.objects.get(name="s1"))


def test_a_current_pass_reads_no_byte_of_the_session(
    enabled_summaries, make_slot, store, backend, reads
):
    make_slot(turns=3)
    reads.clear()  # the set-up's own sync
    assert summary_generate(slot_name="s1") == STORED
    assert reads == ["read_session"]
    summary_turn_mark_set(Slot.objects.get(name="s1").pk, 0)
    reads.clear()

    assert summary_generate(slot_name="s1") == CURRENT

    assert reads == []
    assert backend.calls == 1
    assert mark() == 3  # the sidecar's own count


def test_the_mark_comes_from_the_sidecar(enabled_summaries, make_slot, store, backend, reads):
    slot = make_slot(turns=3)
    assert summary_generate(slot_name="s1") == STORED
    assert must(read_strict(store, slot.session.key))["user_turns"] == 3
    summary_turn_mark_set(slot.pk, 0)

    assert summary_generate(slot_name="s1", force=True) == CURRENT
    assert mark() == 3


def test_the_gate_still_answers_first(configure, make_slot, store, backend, reads):
    """An automatic repeat right after a stored pass is "cadence", as before; and the gate
    sees the sidecar's count (too few turns for a raised minimum is still too few)."""
    configure(enabled=True, regenerate_after_turns=2)
    make_slot(turns=3)
    assert summary_generate(slot_name="s1") == STORED
    reads.clear()

    assert summary_generate(slot_name="s1") == PassOutcome(PassResult.CADENCE)
    configure(enabled=True, min_user_turns=5)
    summary_turn_mark_set(Slot.objects.get(name="s1").pk, 0)
    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.TOO_FEW_TURNS)
    assert reads == []
    assert backend.calls == 1


def test_a_stale_sidecar_means_a_read_and_a_new_summary(
    enabled_summaries, make_slot, store, backend, reads
):
    slot = make_slot(turns=2)
    assert summary_generate(slot_name="s1") == STORED
    add_exchanges(slot, 1, start=2)
    reads.clear()

    assert summary_generate(slot_name="s1", force=True) == STORED

    assert reads == ["read_session"]
    assert backend.calls == 2
    assert must(read_strict(store, slot.session.key))["user_turns"] == 3
    assert mark() == 3


@pytest.mark.parametrize("user_turns", ["missing", None, "3", -1, True])
def test_a_current_sidecar_without_a_usable_count_is_counted_from_the_session(
    enabled_summaries, make_slot, store, backend, reads, user_turns
):
    """An older writer's sidecar: still current, but the mark comes from the rows."""
    slot = make_slot(turns=3)
    assert summary_generate(slot_name="s1") == STORED
    path = sidecar_path(store.root, slot.session.key, INTENTS)
    data = orjson.loads(path.read_bytes())
    if user_turns == "missing":
        del data["user_turns"]
    else:
        data["user_turns"] = user_turns
    path.write_bytes(orjson.dumps(data))  # the sidecar, not the transcript: still valid
    assert read_strict(store, slot.session.key) is not None
    summary_turn_mark_set(slot.pk, 0)
    reads.clear()

    assert summary_generate(slot_name="s1") == CURRENT

    assert reads == ["read_session"]
    assert backend.calls == 1
    assert mark() == 3
