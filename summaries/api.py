"""Turn-loop and summary routes: create and list slots (with their one-line summary), start a turn, rows, revisions, end a turn, summary.

GET summary never generates; POST generates now (forced: lifts only stop_reason and
cadence) and answers with the stored body or a 409 code the panel can explain.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.responses import Status

from transcripts.api import ERRORS, slot_payload
from transcripts.api_support import ApiError, slot_for_caller, slot_gone, slot_not_found
from transcripts.core.errors import RowNotFound
from transcripts.core.keys import is_valid_slot_name
from transcripts.listing import PAGE_DEFAULT, PAGE_MAX, InvalidListCursor
from transcripts.schemas import SlotCreateIn, SlotListOut, SlotOut
from transcripts.services import InvalidSlotName, SlotExists, session_create

from .core.gate import is_restricted
from .runtime import summary_config
from .schemas import RevisionIn, RowIn, SummaryOut, TsOut, TurnEndIn, TurnIn
from .selectors import slot_for_summary_read, slot_list_page, summary_body
from .services import summary_generate
from .turns import (
    TurnRunning,
    slot_append_revision,
    slot_append_row,
    slot_turn_end,
    slot_turn_start,
)
from .worker import summary_worker_hold

router = Router(tags=["turns and summaries"])


def _caller(request: HttpRequest) -> Any:
    return request.auth  # type: ignore[attr-defined]  # a kirocrew_site.auth.Caller


# Filed with the other slot routes in the API docs (their handlers live here for the gist).
@router.post(
    "/slots", response={201: SlotOut, **ERRORS}, operation_id="slot_create", tags=["slots"]
)
def create_slot(request: HttpRequest, body: SlotCreateIn) -> Status[Any]:
    caller = _caller(request)
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
    caller = _caller(request)
    if not 1 <= query.limit <= PAGE_MAX:
        raise ApiError(422, "invalid_request", f"limit must be between 1 and {PAGE_MAX}")
    try:
        page = slot_list_page(scope=caller.scope, cursor=query.cursor, limit=query.limit)
    except InvalidListCursor:
        raise ApiError(422, "invalid_cursor", "cursor is not a slot list cursor") from None
    slots = []
    for session in page.items:
        one_line = getattr(session, "one_line_summary", None)
        slots.append(slot_payload(session.slot, summary=one_line.summary if one_line else ""))
    return {"slots": slots, "next": page.older}


@router.post("/slots/{slot}/turns", response={201: TsOut, **ERRORS}, operation_id="turn_start")
def start_turn(request: HttpRequest, slot: str, body: TurnIn) -> Status[Any]:
    found = slot_for_caller(_caller(request), slot, operation="turn_start")
    try:
        appended = slot_turn_start(slot=found, content=body.content)
    except TurnRunning:
        raise ApiError(409, "turn_running", "this session has a turn in progress") from None
    return Status(201, {"ts": appended.ts[0]})


@router.post("/slots/{slot}/rows", response={201: TsOut, **ERRORS}, operation_id="row_append")
def append_row(request: HttpRequest, slot: str, body: RowIn) -> Status[Any]:
    found = slot_for_caller(_caller(request), slot, operation="row_append")
    appended = slot_append_row(slot=found, role=body.role, content=body.content, meta=body.meta)
    return Status(201, {"ts": appended.ts[0]})


@router.post(
    "/slots/{slot}/rows/{ts}/revisions",
    response={201: TsOut, **ERRORS},
    operation_id="row_revise",
)
def revise_row(request: HttpRequest, slot: str, ts: str, body: RevisionIn) -> Status[Any]:
    found = slot_for_caller(_caller(request), slot, operation="row_revise")
    try:
        appended = slot_append_revision(slot=found, target_ts=ts, patch=body.patch)
    except RowNotFound:  # a vanished transcript (SessionNotFound) is slot_not_found
        raise ApiError(
            404, "row_not_found", "no row with that ts in the current transcript"
        ) from None
    return Status(201, {"ts": appended.ts[0]})


@router.post("/slots/{slot}/turns/end", response={200: SlotOut, **ERRORS}, operation_id="turn_end")
def end_turn(request: HttpRequest, slot: str, body: TurnEndIn) -> dict[str, Any]:
    found = slot_for_caller(_caller(request), slot, operation="turn_end")
    # Without a broker the pass goes to the in-process worker once the response is out.
    with summary_worker_hold():
        return slot_payload(slot_turn_end(slot=found, stop_reason=body.stop_reason))


@router.get(
    "/slots/{slot}/summary", response={200: SummaryOut, **ERRORS}, operation_id="summary_get"
)
def get_summary(request: HttpRequest, slot: str) -> dict[str, Any]:
    caller = _caller(request)
    # The polled read: one precompiled query when the caller may read the slot. Anything
    # else (a bad name, a missing or foreign slot) takes the shared lookup, which answers
    # with its 400 or its audited 404 exactly as every other route does.
    found = slot_for_summary_read(slot) if is_valid_slot_name(slot) else None
    if found is None or (caller.app is not None and found.app_id != caller.app.pk):
        found = slot_for_caller(caller, slot, operation="slot_summary_read")
    return summary_body(found)


_UNAVAILABLE = (409, "summary_unavailable", "could not summarize this session")
_REFUSALS = {
    "in_flight": (409, "summary_in_flight", "a summary is already being written"),
    "running": (409, "summary_turn_running", "this session has a turn in progress"),
    "discarded:running": (409, "summary_turn_running", "this session has a turn in progress"),
    "dirty": (409, "summary_busy", "a write to this session is in progress; try again"),
    "discarded:dirty": (409, "summary_busy", "a write to this session is in progress; try again"),
    "disabled": (409, "summary_disabled", "session summaries are switched off"),
    "no_transcript": (409, "summary_unavailable", "no conversation log"),
}


@router.post(
    "/slots/{slot}/summary", response={200: SummaryOut, **ERRORS}, operation_id="summary_generate"
)
def generate_summary(request: HttpRequest, slot: str) -> dict[str, Any]:
    found = slot_for_caller(_caller(request), slot, operation="slot_summary_generate")
    if not summary_config().enabled:
        raise ApiError(*_REFUSALS["disabled"])
    if is_restricted(found.session.memory_mode):
        raise ApiError(*_UNAVAILABLE)
    outcome = summary_generate(slot_name=found.name, force=True)
    if not outcome.ok:
        # A DELETE that won the race shows as no_transcript, an error or a refused write:
        # the slot is gone, so it is the 404 of a missing slot, not a summary refusal.
        if slot_gone(found):
            raise slot_not_found()
        raise ApiError(*_REFUSALS.get(outcome.reason, _UNAVAILABLE))
    found.refresh_from_db()
    found.session.refresh_from_db()
    body = summary_body(found)  # read back from disk, not the pass's return value
    if not body["intents"]:
        raise slot_not_found() if slot_gone(found) else ApiError(*_UNAVAILABLE)
    body["enabled"] = True
    return body
