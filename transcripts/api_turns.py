"""Turn-loop routes: create and list slots, start a turn, append rows, revise a row, end
the turn. Handlers translate and delegate (ownership via ``slot_for_caller``, writes via
``services.turn_loop``); what follows a turn end (the summary pass) is another app's
receiver of ``transcripts.signals.turn_ended`` and never runs inside the request.

A router of its own beside ``api.py`` (ninja serves one path from one router, and
``/slots`` with its POST and GET lives here); paths, operation ids, tags and error codes
are the API's contract and do not change with the module.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.responses import Status

from kirocrew_site.auth import caller_of

from .api import ERRORS, slot_payload
from .api_support import ApiError, slot_for_caller
from .core.errors import RowNotFound
from .listing import PAGE_DEFAULT, PAGE_MAX, InvalidListCursor
from .schemas import RevisionIn, RowIn, SlotCreateIn, SlotListOut, SlotOut, TsOut, TurnEndIn, TurnIn
from .selectors import slot_list_page
from .services import (
    InvalidSlotName,
    SlotExists,
    TurnRunning,
    session_create,
    slot_append_revision,
    slot_append_row,
    slot_turn_end,
    slot_turn_start,
)

router = Router(tags=["turns and summaries"])


# Filed with the other slot routes in the API docs.
@router.post(
    "/slots", response={201: SlotOut, **ERRORS}, operation_id="slot_create", tags=["slots"]
)
def create_slot(request: HttpRequest, body: SlotCreateIn) -> Status[Any]:
    caller = caller_of(request)
    # Names are one global namespace (a 409 tells that a name is taken, by anyone): a
    # generated name carries 128 random bits, so nobody can guess or probe it.
    name = body.name or f"s-{secrets.token_urlsafe(16)}"
    try:
        slot = session_create(
            name=name, title=body.title, memory_mode=body.memory_mode, app=caller.app
        )
    except SlotExists:
        raise ApiError(409, "slot_exists", "a slot with that name already exists") from None
    except InvalidSlotName:  # never echo the submitted name: it may be a pasted secret
        raise ApiError(
            400, "invalid_slot_name", "slot names match [A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
        ) from None
    return Status(201, slot_payload(slot))


class SlotListQuery(Schema):
    cursor: str | None = None
    limit: int = PAGE_DEFAULT


@router.get(
    "/slots",
    response={200: SlotListOut, **ERRORS},
    operation_id="slot_list",
    tags=["slots"],
    description=(
        "Own slots, newest activity first (slots that never had a row last), with their "
        f"one-line summary. Paginated: `limit` (default {PAGE_DEFAULT}, at most {PAGE_MAX}) "
        "slots per page; `next` is the cursor of the following page (pass it as `cursor`), "
        "null on the last. Cursors are opaque; a forged one is 422 `invalid_cursor`."
    ),
)
def list_slots(request: HttpRequest, query: Query[SlotListQuery]) -> dict[str, Any]:
    caller = caller_of(request)
    if not 1 <= query.limit <= PAGE_MAX:
        raise ApiError(422, "invalid_request", f"limit must be between 1 and {PAGE_MAX}")
    try:
        page = slot_list_page(scope=caller.scope, cursor=query.cursor, limit=query.limit)
    except InvalidListCursor:
        raise ApiError(422, "invalid_cursor", "cursor is not a slot list cursor") from None
    return {"slots": [slot_payload(session.slot) for session in page.items], "next": page.older}


@router.post("/slots/{slot}/turns", response={201: TsOut, **ERRORS}, operation_id="turn_start")
def start_turn(request: HttpRequest, slot: str, body: TurnIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="turn_start")
    try:
        appended = slot_turn_start(slot=found, content=body.content)
    except TurnRunning:
        raise ApiError(409, "turn_running", "this session has a turn in progress") from None
    return Status(201, {"ts": appended.ts[0]})


@router.post("/slots/{slot}/rows", response={201: TsOut, **ERRORS}, operation_id="row_append")
def append_row(request: HttpRequest, slot: str, body: RowIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="row_append")
    appended = slot_append_row(slot=found, role=body.role, content=body.content, meta=body.meta)
    return Status(201, {"ts": appended.ts[0]})


@router.post(
    "/slots/{slot}/rows/{ts}/revisions",
    response={201: TsOut, **ERRORS},
    operation_id="row_revise",
)
def revise_row(request: HttpRequest, slot: str, ts: str, body: RevisionIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="row_revise")
    try:
        appended = slot_append_revision(slot=found, target_ts=ts, patch=body.patch)
    except RowNotFound:  # a vanished transcript (SessionNotFound) is slot_not_found
        raise ApiError(
            404, "row_not_found", "no row with that ts in the current transcript"
        ) from None
    return Status(201, {"ts": appended.ts[0]})


@router.post("/slots/{slot}/turns/end", response={200: SlotOut, **ERRORS}, operation_id="turn_end")
def end_turn(request: HttpRequest, slot: str, body: TurnEndIn) -> dict[str, Any]:
    found = slot_for_caller(caller_of(request), slot, operation="turn_end")
    return slot_payload(slot_turn_end(slot=found, stop_reason=body.stop_reason))
