"""Slot routes that touch only transcripts: read, rename, delete, transcript, rewind, fork.

Handlers translate and delegate: ownership via ``slot_for_caller``, writes via services.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema
from ninja.responses import Status

from kirocrew_site.auth import caller_of

from .api_support import (
    ApiError,
    permission_required,
    slot_for_caller,
    slot_gone,
    slot_not_found,
)
from .core.errors import RowNotFound
from .models import Slot
from .schemas import ErrorOut, ForkIn, RewindIn, SlotOut, SlotPatchIn, TranscriptOut
from .selectors import InvalidCursor, session_transcript
from .services import (
    SlotExists,
    TurnRunning,
    session_delete,
    session_fork,
    session_rewind,
    session_set_title,
)
from .slot_extras import slot_extra_fields

router = Router(tags=["slots"])
ERRORS: dict[int, type[Schema]] = {
    400: ErrorOut,
    401: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    409: ErrorOut,
    413: ErrorOut,
    422: ErrorOut,
    503: ErrorOut,
    507: ErrorOut,
}


def slot_payload(slot: Slot) -> dict[str, Any]:
    """A slot as every route shows it, with the fields other apps add (``slot_extras``:
    summaries' one-line ``summary``), the same values on every route."""
    session = slot.session
    return {
        "name": slot.name,
        "key": session.key,
        "title": session.title,
        "app": slot.app.name if slot.app_id and slot.app else "",
        "memory_mode": session.memory_mode,
        "running": slot.running,
        "user_turns": session.user_turns,
        "last_activity": session.last_activity.isoformat() if session.last_activity else None,
        "summary": "",
        "source": session.source,
        "project": session.project,
        **slot_extra_fields(session),
    }


@router.get("/slots/{slot}", response={200: SlotOut, **ERRORS}, operation_id="slot_get")
def get_slot(request: HttpRequest, slot: str) -> dict[str, Any]:
    return slot_payload(slot_for_caller(caller_of(request), slot, operation="slot_read"))


@router.patch("/slots/{slot}", response={200: SlotOut, **ERRORS}, operation_id="slot_update")
def update_slot(request: HttpRequest, slot: str, body: SlotPatchIn) -> dict[str, Any]:
    found = slot_for_caller(caller_of(request), slot, operation="slot_update")
    if body.title is not None:
        if not session_set_title(key=found.session.key, title=body.title) and slot_gone(found):
            raise slot_not_found()  # a DELETE won the race: nothing was written
        found.refresh_from_db()
        found.session.refresh_from_db()
    return slot_payload(found)


@router.delete("/slots/{slot}", response={204: None, **ERRORS}, operation_id="slot_delete")
def delete_slot(request: HttpRequest, slot: str) -> HttpResponse:
    caller = caller_of(request)
    permission_required(caller, "transcripts.delete_session", operation="slot_delete", name=slot)
    found = slot_for_caller(caller, slot, operation="slot_delete")
    session_delete(key=found.session.key)
    return HttpResponse(status=204)


class TranscriptQuery(Schema):
    after: str | None = None
    limit: int = 100


@router.get(
    "/slots/{slot}/transcript",
    response={200: TranscriptOut, **ERRORS},
    operation_id="slot_transcript",
)
def get_transcript(
    request: HttpRequest, slot: str, query: Query[TranscriptQuery]
) -> dict[str, Any]:
    found = slot_for_caller(caller_of(request), slot, operation="slot_transcript_read")
    if not 1 <= query.limit <= 1000:
        raise ApiError(422, "invalid_request", "limit must be between 1 and 1000")
    try:
        rows, report, cursor = session_transcript(
            key=found.session.key, after=query.after, limit=query.limit
        )
    except InvalidCursor:
        raise ApiError(422, "invalid_cursor", "after names no row of this session") from None
    return {"rows": rows, "report": report.as_dict(), "next": cursor}


@router.post("/slots/{slot}/rewind", response={200: SlotOut, **ERRORS}, operation_id="slot_rewind")
def rewind_slot(request: HttpRequest, slot: str, body: RewindIn) -> dict[str, Any]:
    caller = caller_of(request)
    permission_required(caller, "transcripts.rewind_session", operation="slot_rewind", name=slot)
    found = slot_for_caller(caller, slot, operation="slot_rewind")
    try:
        session_rewind(key=found.session.key, after_ts=body.after_ts)
    except TurnRunning:
        raise ApiError(409, "turn_running", "this session has a turn in progress") from None
    except RowNotFound:
        raise ApiError(
            404, "row_not_found", "no row with that ts in the current transcript"
        ) from None
    found.session.refresh_from_db()
    return slot_payload(found)


@router.post("/slots/{slot}/fork", response={201: SlotOut, **ERRORS}, operation_id="slot_fork")
def fork_slot(request: HttpRequest, slot: str, body: ForkIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="slot_fork")
    try:
        child = session_fork(key=found.session.key, name=body.name)
    except SlotExists:
        raise ApiError(409, "slot_exists", "a slot with that name already exists") from None
    return Status(201, slot_payload(child))
