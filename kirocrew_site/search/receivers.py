"""Signals -> index updates, each after the commit that made it true. A receiver never
raises into its sender (``send_robust`` logs it too); a failure leaves the index behind,
and the next append's catch-up or ``search_rebuild`` brings it level."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from . import services

log = logging.getLogger(__name__)


def _never_raises(receiver: Callable[..., None]) -> Callable[..., None]:
    """The index is derived: a failure to update it is logged and never fails (or, sent
    with ``send``, breaks) what announced it; the next catch-up or a rebuild repairs it."""

    @functools.wraps(receiver)
    def guarded(sender: Any, **kwargs: Any) -> None:
        try:
            receiver(sender, **kwargs)
        except Exception:
            log.exception("search index update failed (%s)", receiver.__name__)

    return guarded


def _index(slot_name: str) -> None:
    session = services.session_for_slot_name(slot_name)
    if session is not None:
        services.search_index_session(session)


@_never_raises
def on_rows_appended(sender: Any, *, slot_name: str, **_: Any) -> None:
    _index(slot_name)


@_never_raises
def on_turn_ended(sender: Any, *, slot_name: str, **_: Any) -> None:
    # Rows written without an announcement (a plain service append) are caught up here.
    _index(slot_name)


@_never_raises
def on_revision_appended(sender: Any, *, slot_name: str, target_ts: str, **_: Any) -> None:
    session = services.session_for_slot_name(slot_name)
    if session is not None:
        services.search_revise_row(session, target_ts)


@_never_raises
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


@_never_raises
def on_session_deleted(sender: Any, *, session_key: str, slot_name: str, **_: Any) -> None:
    from transcripts.models import Session

    # The row may be gone already (cascade); the docs may not be, if the FK was not.
    for session_id in Session.objects.filter(key=session_key).values_list("pk", flat=True):
        services.search_forget_session(session_id)


@_never_raises
def on_summary_stored(sender: Any, *, slot_name: str, **_: Any) -> None:
    session = services.session_for_slot_name(slot_name)
    if session is not None:
        services.search_index_summary(session)


@_never_raises
def on_import_finished(sender: Any, **_: Any) -> None:
    # Imports of kirocrew files announce no rows: read what each session gained.
    services.search_catch_up()
