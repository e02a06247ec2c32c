"""What every API router shares: the error type and the ownership check.

Every denial answers exactly like a missing slot (same status, body and headers) and
records one SecurityEvent with the true reason (anti-enumeration, CWE-204).
"""

from __future__ import annotations

from typing import Protocol

from .core.keys import is_valid_slot_name
from .models import App, Slot
from .services import security_event_record


class ApiError(Exception):
    def __init__(self, status: int, code: str, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.code = code
        self.error = error


class CallerLike(Protocol):
    @property
    def app(self) -> App | None: ...

    @property
    def label(self) -> str: ...


def slot_not_found() -> ApiError:
    return ApiError(404, "slot_not_found", "not found")


def slot_for_caller(caller: CallerLike, name: str, *, operation: str) -> Slot:
    """The slot ``name`` if ``caller`` may reach it; else the one 404 for missing and denied."""
    if not is_valid_slot_name(name):
        raise ApiError(
            400, "invalid_slot_name", "slot names match [A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
        )
    try:  # .get(): no ORDER BY, unlike .first(); the name is unique
        slot = Slot.objects.select_related("session", "app").get(name=name)
    except Slot.DoesNotExist:
        raise slot_not_found() from None
    if caller.app is not None and slot.app_id != caller.app.pk:
        security_event_record(
            caller=caller.label,
            operation=operation,
            source="app_isolation",
            resource=f"slot={name}",
            error="app cannot access unscoped slots"
            if slot.app_id is None
            else "app does not own this slot",
        )
        raise slot_not_found()
    return slot
