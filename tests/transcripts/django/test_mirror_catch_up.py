"""A mirror that missed a write on disk (its update failed: a full disk holds the database
too) catches up instead of drifting: the next append to the session rebuilds it, and a
write anywhere in the process re-syncs the sessions it deferred."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from tests.transcripts.django.util import mirror_diff
from transcripts.core.store import TranscriptStore
from transcripts.models import Session
from transcripts.services import session_append_row, session_create
from transcripts.services.sync import mirror_defer, mirror_deferred


def test_an_append_after_a_missed_mirror_update_rebuilds_the_row_instead_of_drifting(
    store: TranscriptStore, db: None
) -> None:
    slot = session_create(name="drift", app=None)
    key = slot.session.key
    session_append_row(key=key, role="user", content="first")
    # On disk, never mirrored: what an append whose mirror update failed leaves.
    store.append_rows(key, [{"role": "assistant", "content": "missed"}], create=False)
    session_append_row(key=key, role="user", content="third")
    # Moved forward from the stale row (+1), the count would stay one short for good.
    assert Session.objects.get(key=key).row_count == 3
    assert mirror_diff(key) == {}


@pytest.mark.django_db(transaction=True)
def test_a_deferred_mirror_is_re_synced_by_the_next_write_in_the_process(
    store: TranscriptStore,
) -> None:
    quiet = session_create(name="quiet", app=None).session.key
    busy = session_create(name="busy", app=None).session.key
    gone = session_create(name="gone", app=None).session.key
    store.append_rows(quiet, [{"role": "user", "content": "landed"}], create=False)
    mirror_defer(quiet, OperationalError("database or disk is full"))
    store.delete(gone)  # a delete whose mirror rows could not be removed
    mirror_defer(gone, OperationalError("database or disk is full"))
    assert Session.objects.get(key=quiet).row_count == 0  # stale until a write

    session_append_row(key=busy, role="user", content="any write")

    assert mirror_deferred() == []
    assert mirror_diff(quiet) == {}
    assert Session.objects.get(key=quiet).row_count == 1
    assert not Session.objects.filter(key=gone).exists()
