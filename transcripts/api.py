"""The slot API: ``router`` (read, rename, delete, transcript, rewind, fork), the turn loop's
``turns_router`` (create and list slots, turns, rows, revisions, turn end), and what every
API router shares: the error type, the ownership and permission checks.

Every denial answers exactly like a missing slot and records a SecurityEvent with the true
reason (CWE-204). For an app a missing slot is recorded too, so both paths run the same
statements and take the same time (CWE-208).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema
from ninja.parser import Parser
from ninja.responses import Status

from kirocrew_site.auth import Caller, caller_of

from .core.content import MAX_TEXT_CHARS, loads_checked
from .core.errors import RowNotFound, SessionNotFound
from .core.keys import is_valid_slot_name
from .core.roles import Role
from .listing import PAGE_DEFAULT, PAGE_MAX, InvalidListCursor
from .models import Session, Slot
from .runtime import get_store
from .selectors import (
    MAX_PAGE,
    InvalidCursor,
    session_transcript,
    slot_extra_fields,
    slot_list_page,
)
from .services import (
    InvalidSlotName,
    SlotExists,
    TurnRunning,
    security_event_record,
    session_create,
    session_delete,
    session_fork,
    session_rewind,
    session_set_title,
    slot_append_revision,
    slot_append_row,
    slot_turn_end,
    slot_turn_start,
)


class ApiError(Exception):
    def __init__(self, status: int, code: str, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.code = code
        self.error = error


class ContentParser(Parser):
    """Request bodies under the content rule (``transcripts.core.content``) before any
    handler runs, so no route can write what it refuses. Ninja wraps a parser error in a
    400; the API maps one caused by ``ContentRejected`` to 422 ``invalid_request``."""

    def parse_body(self, request: HttpRequest) -> Any:
        return loads_checked(request.body)


# A service's refusal and its answer, on the routes that can meet it (``refused_as``).
REFUSED: dict[type[Exception], tuple[int, str, str]] = {
    TurnRunning: (409, "turn_running", "this session has a turn in progress"),
    SlotExists: (409, "slot_exists", "a slot with that name already exists"),
    RowNotFound: (404, "row_not_found", "no row with that ts in the current transcript"),
    # Never the submitted name: it may be a pasted secret.
    InvalidSlotName: (
        400,
        "invalid_slot_name",
        "slot names match [A-Za-z0-9][A-Za-z0-9._:-]{0,127}",
    ),
    InvalidCursor: (422, "invalid_cursor", "after names no row of this session"),
    InvalidListCursor: (422, "invalid_cursor", "cursor is not a slot list cursor"),
}


@contextmanager
def refused_as(*refusals: type[Exception]) -> Iterator[None]:
    """Answer ``refusals`` (nothing else) with their ``REFUSED`` row."""
    try:
        yield
    except refusals as exc:
        raise ApiError(*next(REFUSED[r] for r in refusals if isinstance(exc, r))) from None


def check_limit(limit: int, maximum: int) -> None:
    if not 1 <= limit <= maximum:
        raise ApiError(422, "invalid_request", f"limit must be between 1 and {maximum}")


def slot_not_found() -> ApiError:
    return ApiError(404, "slot_not_found", "not found")


# What a request meets after its lookup when a DELETE of the slot wins the race: the API
# answers each with the 404 of a missing slot.
SLOT_GONE: tuple[type[Exception], ...] = (SessionNotFound, Slot.DoesNotExist, Session.DoesNotExist)


def slot_gone(slot: Slot) -> bool:
    """Whether ``slot`` was deleted since it was looked up. A delete removes the files
    first and the rows second, so a missing transcript already counts as gone."""
    return not get_store().exists(slot.session.key) or not Slot.objects.filter(pk=slot.pk).exists()


def _reaches(caller: Caller, slot: Slot) -> bool:
    return caller.app is None or slot.app_id == caller.app.pk


def slot_for_caller(
    caller: Caller, name: str, *, operation: str, found: Slot | None = None
) -> Slot:
    """THE ownership check: the slot ``name`` if ``caller`` may reach it, else the one 404.
    ``found``: the slot a route already read with a cheaper query, used only when the
    caller reaches it, so a foreign slot costs the same queries as a missing one."""
    if not is_valid_slot_name(name):
        raise ApiError(*REFUSED[InvalidSlotName])
    if found is not None and found.name == name and _reaches(caller, found):
        return found
    # .filter()[:1]: one SELECT and no exception object on either branch; names are unique.
    slot = next(iter(Slot.objects.select_related("session", "app").filter(name=name)[:1]), None)
    if slot is not None and _reaches(caller, slot):
        return slot
    if caller.app is None:  # a dashboard user: nothing to hide
        raise slot_not_found()
    # Missing and denied: the same record call (one upsert), then the same 404.
    security_event_record(
        caller=caller.label,
        operation=operation,
        outcome="not_found" if slot is None else "denied",
        source="app_isolation",
        resource=f"slot={name}",
        error="no such slot"
        if slot is None
        else "app cannot access unscoped slots"
        if slot.app_id is None
        else "app does not own this slot",
    )
    raise slot_not_found()


def permission_required(caller: Caller, perm: str, *, operation: str, name: str) -> None:
    """Destructive routes: a dashboard user needs staff or ``perm``. Refused before any
    lookup: 403 for every name."""
    if caller.may(perm):
        return
    security_event_record(
        caller=caller.label,
        operation=operation,
        source="dashboard_permission",
        resource=f"slot={name}",
        error=f"needs staff or {perm}",
    )
    raise ApiError(
        403, "permission_denied", f"this action needs a staff account or the {perm} permission"
    )


# The bodies: the stable turn-loop interface.
MemoryMode = Literal["", "persistent", "default", "incognito", "temporary"]
SlotName = Field(
    default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"
)


class ErrorOut(Schema):
    error: str
    code: str


class SlotCreateIn(Schema):
    name: str | None = SlotName
    title: str = Field(default="", max_length=500)
    memory_mode: MemoryMode = ""


class SlotPatchIn(Schema):
    title: str | None = Field(default=None, max_length=500)


class SlotOut(Schema):
    name: str
    key: str
    title: str
    app: str
    memory_mode: str
    running: bool
    user_turns: int
    last_activity: str | None
    summary: str = ""
    source: str = ""  # kirocrew | claude-code | codex | api (core/provenance.py)
    project: str = ""  # the cwd or project path line 0 names


class SlotListOut(Schema):
    slots: list[SlotOut]
    next: str | None = None  # the cursor of the next (older) page; None on the last


class TranscriptOut(Schema):
    rows: list[dict[str, Any]]
    report: dict[str, Any]
    next: str | None


class RewindIn(Schema):
    after_ts: str = Field(min_length=1, max_length=64)


class ForkIn(Schema):
    name: str | None = SlotName


class TurnIn(Schema):
    content: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


class RowIn(Schema):
    role: Role
    content: str = Field(max_length=MAX_TEXT_CHARS)
    meta: dict[str, Any] | None = None


class RevisionIn(Schema):
    # Every string in it is capped like a row's content (MAX_TEXT_CHARS), and it may not
    # change role or ts: transcripts.core.content and the store's append_revision.
    patch: dict[str, Any] = Field(min_length=1)


class TurnEndIn(Schema):
    stop_reason: str = Field(min_length=1, max_length=64)


class TsOut(Schema):
    ts: str


router = Router(tags=["slots"])
turns_router = Router(tags=["turns and summaries"])
ERRORS: dict[int, type[Schema]] = dict.fromkeys(
    (400, 401, 403, 404, 409, 413, 422, 503, 507), ErrorOut
)
SLOT = {200: SlotOut, **ERRORS}
NEW_SLOT = {201: SlotOut, **ERRORS}
NEW_ROW = {201: TsOut, **ERRORS}


def slot_payload(slot: Slot) -> dict[str, Any]:
    """A slot as every route shows it, with the fields other apps add (``SlotExtra``)."""
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


@router.get("/slots/{slot}", response=SLOT, operation_id="slot_get")
def get_slot(request: HttpRequest, slot: str) -> dict[str, Any]:
    return slot_payload(slot_for_caller(caller_of(request), slot, operation="slot_read"))


@router.patch("/slots/{slot}", response=SLOT, operation_id="slot_update")
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
    check_limit(query.limit, MAX_PAGE)
    with refused_as(InvalidCursor):
        rows, report, cursor = session_transcript(
            key=found.session.key, after=query.after, limit=query.limit
        )
    return {"rows": rows, "report": report.as_dict(), "next": cursor}


@router.post("/slots/{slot}/rewind", response=SLOT, operation_id="slot_rewind")
def rewind_slot(request: HttpRequest, slot: str, body: RewindIn) -> dict[str, Any]:
    caller = caller_of(request)
    permission_required(caller, "transcripts.rewind_session", operation="slot_rewind", name=slot)
    found = slot_for_caller(caller, slot, operation="slot_rewind")
    with refused_as(TurnRunning, RowNotFound):
        session_rewind(key=found.session.key, after_ts=body.after_ts)
    found.session.refresh_from_db()
    return slot_payload(found)


@router.post("/slots/{slot}/fork", response=NEW_SLOT, operation_id="slot_fork")
def fork_slot(request: HttpRequest, slot: str, body: ForkIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="slot_fork")
    with refused_as(SlotExists):
        child = session_fork(key=found.session.key, name=body.name)
    return Status(201, slot_payload(child))


# Filed with the other slot routes in the API docs.
@turns_router.post("/slots", response=NEW_SLOT, operation_id="slot_create", tags=["slots"])
def create_slot(request: HttpRequest, body: SlotCreateIn) -> Status[Any]:
    caller = caller_of(request)
    # Names are one global namespace (a 409 tells that a name is taken, by anyone): a
    # generated name carries 128 random bits, so nobody can guess or probe it.
    name = body.name or f"s-{secrets.token_urlsafe(16)}"
    with refused_as(SlotExists, InvalidSlotName):
        slot = session_create(
            name=name, title=body.title, memory_mode=body.memory_mode, app=caller.app
        )
    return Status(201, slot_payload(slot))


class SlotListQuery(Schema):
    cursor: str | None = None
    limit: int = PAGE_DEFAULT


@turns_router.get(
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
    check_limit(query.limit, PAGE_MAX)
    with refused_as(InvalidListCursor):
        page = slot_list_page(scope=caller.scope, cursor=query.cursor, limit=query.limit)
    return {"slots": [slot_payload(session.slot) for session in page.items], "next": page.older}


@turns_router.post("/slots/{slot}/turns", response=NEW_ROW, operation_id="turn_start")
def start_turn(request: HttpRequest, slot: str, body: TurnIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="turn_start")
    with refused_as(TurnRunning):
        appended = slot_turn_start(slot=found, content=body.content)
    return Status(201, {"ts": appended.ts[0]})


@turns_router.post("/slots/{slot}/rows", response=NEW_ROW, operation_id="row_append")
def append_row(request: HttpRequest, slot: str, body: RowIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="row_append")
    appended = slot_append_row(slot=found, role=body.role, content=body.content, meta=body.meta)
    return Status(201, {"ts": appended.ts[0]})


@turns_router.post("/slots/{slot}/rows/{ts}/revisions", response=NEW_ROW, operation_id="row_revise")
def revise_row(request: HttpRequest, slot: str, ts: str, body: RevisionIn) -> Status[Any]:
    found = slot_for_caller(caller_of(request), slot, operation="row_revise")
    with refused_as(RowNotFound):  # a vanished transcript (SessionNotFound) is slot_not_found
        appended = slot_append_revision(slot=found, target_ts=ts, patch=body.patch)
    return Status(201, {"ts": appended.ts[0]})


@turns_router.post("/slots/{slot}/turns/end", response=SLOT, operation_id="turn_end")
def end_turn(request: HttpRequest, slot: str, body: TurnEndIn) -> dict[str, Any]:
    found = slot_for_caller(caller_of(request), slot, operation="turn_end")
    return slot_payload(slot_turn_end(slot=found, stop_reason=body.stop_reason))
