"""Signals -> index updates, each after the commit that made it true. A receiver never
raises into its sender (``send_robust`` logs it too); a failure leaves the index behind,
and the next append's catch-up or ``search_rebuild`` brings it level."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from transcripts.models import Session

from . import services

log = logging.getLogger(__name__)


def _never_raises(receiver: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(receiver)
    def guarded(sender: Any, **kwargs: Any) -> None:
        try:
            receiver(sender, **kwargs)
        except Exception:
            log.exception("search index update failed (%s)", receiver.__name__)

    return guarded


def _on_slot(receiver: Callable[..., None]) -> Callable[..., None]:
    """A receiver called with the session of the signal's ``slot_name``, when there is one."""

    @functools.wraps(receiver)
    def on_slot(sender: Any, *, slot_name: str, **kwargs: Any) -> None:
        session = services.session_for_slot_name(slot_name)
        if session is not None:
            receiver(session, **kwargs)

    return _never_raises(on_slot)


@_on_slot
def on_rows_appended(session: Session, **_: Any) -> None:
    services.search_index_session(session)


@_on_slot
def on_turn_ended(session: Session, **_: Any) -> None:
    # Rows written without an announcement (a plain service append) are caught up here; a
    # receiver of its own, so a failure's log line names the turn end.
    services.search_index_session(session)


@_on_slot
def on_revision_appended(session: Session, *, target_ts: str, **_: Any) -> None:
    services.search_revise_row(session, target_ts)


@_on_slot
def on_summary_stored(session: Session, **_: Any) -> None:
    services.search_index_summary(session)


@_never_raises
def on_session_rewritten(sender: Any, *, session_key: str, reason: str, **_: Any) -> None:
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


@_never_raises
def on_session_deleted(sender: Any, *, session_key: str, slot_name: str, **_: Any) -> None:
    # The row may be gone already (cascade); the docs may not be, if the FK was not.
    for session_id in Session.objects.filter(key=session_key).values_list("pk", flat=True):
        services.search_forget_session(session_id)


@_never_raises
def on_import_finished(sender: Any, **_: Any) -> None:
    # Imports of kirocrew files announce no rows: read what each session gained.
    services.search_catch_up()
