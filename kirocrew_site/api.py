"""The API: one NinjaAPI, three routers, one error envelope ``{"error", "code"}`` everywhere.

Bad input is a clear 4xx JSON error; a storage failure a documented 503/507 with a
generic body; anything unexpected a generic 500 JSON (never a traceback or HTML page).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError

from summaries.api import router as summaries_router
from transcripts.api import (
    SLOT_GONE,
    ApiError,
    ContentParser,
    ErrorOut,
    slot_not_found,
    turns_router,
)
from transcripts.api import router as transcripts_router
from transcripts.core.content import ContentRejected
from transcripts.core.errors import LockTimeout, RecordRejected, TranscriptWriteError
from transcripts.core.storage import storage_fault
from transcripts.services import InvalidSlotName

from .auth import AppBearer, CsrfRejected, DashboardSession
from .search.api import router as search_router

log = logging.getLogger(__name__)

api = NinjaAPI(
    title="Kiro Crew sessions",
    version="1",
    description=(
        "Transcripts and intent-level summaries of agent chat sessions. Apps authenticate "
        "with `Authorization: Bearer <token>`; dashboard users with their session (CSRF on "
        'unsafe methods). Errors are `{"error", "code"}`.'
    ),
    auth=[AppBearer(), DashboardSession()],
    parser=ContentParser(),
    urls_namespace="api",
)
api.add_router("/chat/", transcripts_router)
api.add_router("/chat/", turns_router)
api.add_router("/chat/", summaries_router)
api.add_router("/chat/", search_router)


class HealthOut(Schema):
    ok: bool


@api.get(
    "/health", response={200: HealthOut, 401: ErrorOut}, operation_id="health", tags=["health"]
)
def health(request: HttpRequest) -> dict[str, bool]:
    """A trivial authenticated JSON answer (no disk, one token lookup): a liveness check
    for callers and the baseline arm of bench/bench_summary_rps.py. Authenticated like
    every API route, so an anonymous request is 401."""
    return {"ok": True}


def envelope(request: HttpRequest, status: int, code: str, error: str) -> HttpResponse:
    return api.create_response(request, {"error": error, "code": code}, status=status)


# Exceptions answered with a fixed envelope: (status, code, error).
FIXED_ANSWERS: dict[type[Exception], tuple[int, str, str]] = {
    AuthenticationError: (401, "unauthorized", "authentication required"),
    CsrfRejected: (403, "csrf_failed", "CSRF verification failed"),
    Http404: (404, "not_found", "not found"),
    # Over DATA_UPLOAD_MAX_MEMORY_SIZE: refused before a byte is parsed or written.
    RequestDataTooBig: (413, "payload_too_large", "request body too large"),
    InvalidSlotName: (400, "invalid_slot_name", "invalid slot name"),
    LockTimeout: (503, "busy", "the session is busy; try again"),
}


def _fixed_answer(status: int, code: str, error: str) -> Callable[..., HttpResponse]:
    return lambda request, exc: envelope(request, status, code, error)


for _exc, _answer in FIXED_ANSWERS.items():
    api.add_exception_handler(_exc, _fixed_answer(*_answer))


@api.exception_handler(ApiError)
def on_api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return envelope(request, exc.status, exc.code, exc.error)


@api.exception_handler(ValidationError)
def on_invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # Only locations and messages: a pydantic "input" could echo a pasted secret.
    problems = [
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p not in ('body', 'query', 'path')) or 'body'}: {e.get('msg', 'invalid')}"
        for e in exc.errors[:5]
        if isinstance(e, dict)
    ]
    message = "invalid request" + (": " + "; ".join(problems) if problems else "")
    return envelope(request, 422, "invalid_request", message[:1000])


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if isinstance(exc.__cause__, ContentRejected):  # the body parser refused its content
        return envelope(request, 422, "invalid_request", f"invalid request: {exc.__cause__}")
    code = "bad_request" if exc.status_code == 400 else "http_error"
    return envelope(request, exc.status_code, code, str(exc.message)[:200])


@api.exception_handler(RecordRejected)
def on_rejected(request: HttpRequest, exc: RecordRejected) -> HttpResponse:
    return envelope(request, 422, "record_rejected", str(exc)[:300])


def on_storage_error(request: HttpRequest, exc: Any) -> HttpResponse:
    """A full store is 507 ``storage_full``, an unwritable or failing one 503
    ``storage_unavailable`` (the store's files and the database alike: on the embedded
    profile both live in ``$KIROCREW_HOME``); any other error of these types is a 500."""
    fault = storage_fault(exc)
    if fault is None:
        return on_unexpected(request, exc)
    # The type and message only (paths, errno, SQLite's text): never a traceback per request.
    log.error(
        "storage %s on %s %s: %s: %s",
        fault.value,
        request.method,
        request.path,
        type(exc).__name__,
        exc,
    )
    return envelope(request, fault.status, fault.value, fault.message)


for _storage in (TranscriptWriteError, OSError, DatabaseError):
    api.add_exception_handler(_storage, on_storage_error)


def on_slot_gone(request: HttpRequest, exc: object) -> HttpResponse:
    # A DELETE of the same slot won the race after the lookup: the same 404 as a slot that
    # was never there (and as a foreign one), never a 500.
    log.info("slot gone during %s %s (%s)", request.method, request.path, type(exc).__name__)
    return on_api_error(request, slot_not_found())


for _gone in SLOT_GONE:
    api.add_exception_handler(_gone, on_slot_gone)


@api.exception_handler(Exception)
def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.exception("unhandled API error on %s %s", request.method, request.path)
    return envelope(request, 500, "internal_error", "internal error")
