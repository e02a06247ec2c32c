"""Signals -> index updates, each after the commit that made it true. A receiver never
raises into its sender (``send_robust`` logs it too); a failure leaves the index behind,
and the next append's catch-up or ``search_rebuild`` brings it level."""

from __future__ import annotations

import logging
from typing import Any

from . import services

log = logging.getLogger(__name__)


def _index(slot_name: str) -> None:
    session = services.session_for_slot_name(slot_name)
    if session is not None:
        services.search_index_session(session)


def on_rows_appended(sender: Any, *, slot_name: str, **_: Any) -> None:
    _index(slot_name)


def on_turn_ended(sender: Any, *, slot_name: str, **_: Any) -> None:
    # Rows written without an announcement (a plain service append) are caught up here.
    _index(slot_name)


def on_revision_appended(sender: Any, *, slot_name: str, target_ts: str, **_: Any) -> None:
    session = services.session_for_slot_name(slot_name)
    if session is not None:
        services.search_revise_row(session, target_ts)


def on_session_rewritten(sender: Any, *, session_key: str, reason: str, **_: Any) -> None:
    from transcripts.models import Session

    session = Session.objects.filter(key=session_key).first()
    if session is None:
        return
    if reason == "rotate":
        # Rotation moves rows into an archive the session still reads: the folded rows,
        # and the mark's cursor, are unchanged. Re-reading the whole chain at every
        # rotation (each 10 MiB of appends) would cost O(session) each time.
        services.search_index_session(session)
    else:  # rewind, purge: rows are gone
        services.search_reindex_session(session)


def on_session_deleted(sender: Any, *, session_key: str, slot_name: str, **_: Any) -> None:
    from transcripts.models import Session

    # The row may be gone already (cascade); the docs may not be, if the FK was not.
    for session_id in Session.objects.filter(key=session_key).values_list("pk", flat=True):
        services.search_forget_session(session_id)


def on_summary_stored(sender: Any, *, slot_name: str, **_: Any) -> None:
    session = services.session_for_slot_name(slot_name)
    if session is not None:
        services.search_index_summary(session)


def on_import_finished(sender: Any, **_: Any) -> None:
    # Imports of kirocrew files announce no rows: read what each session gained.
    services.search_catch_up()
