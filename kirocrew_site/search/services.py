"""Index writes, derived from the files: rows after the session's mark (read with the cursor
reader, so an append costs the rows it added), summaries, forgetting, rebuilding. Writes
hold the session's mark row locked, so two catch-ups never index a row twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F

from summaries.models import IntentSummary, OneLineSummary
from transcripts.core.errors import SessionNotFound
from transcripts.core.keys import DASHBOARD_PREFIX
from transcripts.core.paging import cursor_of, parse_cursor
from transcripts.core.user_turns import is_user_turn
from transcripts.models import Session, Slot
from transcripts.selectors import InvalidCursor, session_transcript

from .core import chunks, content_text, summary_texts
from .models import DocKind, SearchDoc, SearchMark

log = logging.getLogger(__name__)

PAGE_ROWS = 500  # rows per cursor read while indexing
BATCH_DOCS = 2000  # docs per bulk insert


def session_for_slot_name(slot_name: str) -> Session | None:
    """The session a signal's ``slot_name`` names: its slot's, else an imported session's
    key (``slot_name_for_key`` drops the ``dashboard:`` prefix)."""
    slot = Slot.objects.select_related("session").filter(name=slot_name).first()
    if slot is not None:
        return slot.session
    return Session.objects.filter(key__in=[slot_name, DASHBOARD_PREFIX + slot_name]).first()


def search_index_session(session: Session) -> int:
    """Index the rows after the mark (one the transcript no longer has starts over)."""
    try:
        return _catch_up(session)
    except InvalidCursor:
        return search_reindex_session(session)


def search_reindex_session(session: Session) -> int:
    with transaction.atomic():
        mark = _locked_mark(session)
        SearchDoc.objects.filter(session=session, kind=DocKind.ROW).delete()
        mark.cursor, mark.rows, mark.turns = "", 0, 0
        mark.save()
    return _catch_up(session)


def search_revise_row(session: Session, target_ts: str) -> int:
    """A revision changed the row ``target_ts``: index again from the last indexed row
    before it (rows between have no text, so no turn either). Revisions almost always
    target the running turn, so this reads a few rows."""
    with transaction.atomic():
        mark = _locked_mark(session)
        rows = SearchDoc.objects.filter(session=session, kind=DocKind.ROW)
        # Not indexed yet (or a row without text): the catch-up reads it.
        target = rows.filter(cursor=target_ts).order_by("seq").first()
        if target is not None:
            before = rows.filter(seq__lt=target.seq).order_by("-seq").first()
            if before is None:
                mark.cursor, mark.rows, mark.turns = "", 0, 0
            else:
                mark.cursor, mark.rows, mark.turns = before.cursor, before.seq + 1, before.turn
            rows.filter(seq__gte=mark.rows).delete()
            mark.save()
    return search_index_session(session)


def search_index_summary(session: Session) -> int:
    intents = IntentSummary.objects.filter(session=session).first()
    gist = OneLineSummary.objects.filter(session=session).values_list("summary", flat=True)
    texts = summary_texts(intents.payload if intents else None, next(iter(gist), ""))
    docs = [
        SearchDoc(session=session, kind=DocKind.SUMMARY, seq=i, turn=part.turn, text=piece)
        for i, part in enumerate(texts)
        for piece in chunks(part.text)
    ]
    with transaction.atomic():
        SearchDoc.objects.filter(session=session, kind=DocKind.SUMMARY).delete()
        SearchDoc.objects.bulk_create(docs, batch_size=BATCH_DOCS)
    return len(docs)


def search_forget_session(session_id: int) -> None:
    with transaction.atomic():
        SearchDoc.objects.filter(session_id=session_id).delete()
        SearchMark.objects.filter(session_id=session_id).delete()


def search_catch_up() -> int:
    """Index every session whose mark is behind its mirror's row count (or has none): for
    writers that announce no rows (``import_transcripts`` of kirocrew files)."""
    level = SearchMark.objects.filter(session__row_count=F("rows")).values("session_id")
    caught = 0
    for session in Session.objects.exclude(pk__in=level).order_by("pk").iterator():
        search_index_session(session)
        caught += 1
    return caught


@dataclass(slots=True)
class RebuildReport:
    sessions: int = 0
    rows: int = 0
    missing: int = 0  # sessions whose transcript file is gone


def search_rebuild(*, progress: Callable[[int], None] | None = None) -> RebuildReport:
    report = RebuildReport()
    with transaction.atomic():
        SearchDoc.objects.all().delete()
        SearchMark.objects.all().delete()
    for session in Session.objects.order_by("pk").iterator():
        report.sessions += 1
        report.rows += search_reindex_session(session)
        search_index_summary(session)
        if not SearchMark.objects.filter(session=session, rows__gt=0).exists():
            try:
                session_transcript(key=session.key, limit=1)
            except SessionNotFound:
                report.missing += 1
        if progress is not None:
            progress(report.sessions)
    return report


def _locked_mark(session: Session) -> SearchMark:
    SearchMark.objects.get_or_create(session=session)
    return SearchMark.objects.select_for_update().get(session=session)


def _catch_up(session: Session) -> int:
    """Index the rows after the mark, a page per transaction (a long session's whole read
    under SQLite's write lock would stall other writers past their busy timeout).
    ``InvalidCursor`` rolls back only the page that met it."""
    read = 0
    while True:
        with transaction.atomic():
            count, more = _catch_up_page(session, _locked_mark(session))
        read += count
        if not more:
            return read


def _catch_up_page(session: Session, mark: SearchMark) -> tuple[int, bool]:
    """``(rows read, more to read)``."""
    try:
        page, _report, following = session_transcript(
            key=session.key, after=mark.cursor or None, limit=PAGE_ROWS
        )
    except SessionNotFound:
        return 0, False
    # How many rows bearing the mark's ts were read (``ts#n``: n).
    seen = dict([parse_cursor(mark.cursor)]) if mark.cursor else {}
    batch: list[SearchDoc] = []
    for row in page:
        ts = str(row.get("ts"))
        seen[ts] = seen.get(ts, 0) + 1
        cursor = cursor_of(ts, seen[ts])  # as the reader counts them
        if is_user_turn(row):
            mark.turns += 1
        role = str(row.get("role") or "")[:64]
        for piece in chunks(content_text(row.get("content"))):
            batch.append(
                SearchDoc(
                    session_id=session.pk,
                    kind=DocKind.ROW,
                    seq=mark.rows,
                    cursor=cursor,
                    turn=mark.turns,
                    role=role,
                    text=piece,
                )
            )
        mark.rows += 1
        mark.cursor = cursor
        if len(batch) >= BATCH_DOCS:
            SearchDoc.objects.bulk_create(batch)
            batch = []
    SearchDoc.objects.bulk_create(batch)
    if page:
        mark.save()
    return len(page), bool(page) and bool(following)
