"""What every API router shares: the error type, the ownership and permission checks.

Every denial answers exactly like a missing slot and records a SecurityEvent with the true
reason (CWE-204). For an app a missing slot is recorded too, so both paths run the same
statements and take the same time (CWE-208).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.http import HttpRequest
from ninja.parser import Parser

from kirocrew_site.auth import Caller

from .core.content import loads_checked
from .core.errors import RowNotFound, SessionNotFound
from .core.keys import is_valid_slot_name
from .core.paging import InvalidCursor
from .listing import InvalidListCursor
from .models import Session, Slot
from .runtime import get_store
from .services import InvalidSlotName, SlotExists, TurnRunning, security_event_record


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
