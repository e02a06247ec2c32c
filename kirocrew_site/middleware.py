"""Site middleware: the JSON error envelope and HEAD under ``/api/``, and the CSP header."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse

API_PREFIX = "/api/"
CODES = {
    400: ("bad_request", "bad request"),
    403: ("forbidden", "forbidden"),
    404: ("not_found", "not found"),
    405: ("method_not_allowed", "method not allowed"),
    413: ("payload_too_large", "request body too large"),
    500: ("internal_error", "internal error"),
}


def json_error(status: int, code: str, error: str) -> JsonResponse:
    """The ``{"error", "code"}`` envelope outside ninja (its handlers build their own)."""
    return JsonResponse({"error": error, "code": code}, status=status)


class _Middleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response


class ApiJsonErrors(_Middleware):
    """Innermost: a non-JSON error answer under /api/ becomes ``{"error", "code"}``. Ninja's
    handlers cover its operations; this catches what never reaches them: ninja's 405 (a
    bare text body), Django's 404, 400 and 500 pages and the CSRF middleware's 403."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not request.path.startswith(API_PREFIX)
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        code, error = CODES.get(response.status_code, ("http_error", "request failed"))
        replaced = json_error(response.status_code, code, error)
        if response.has_header("Allow"):  # a 405's: the methods the path answers
            replaced["Allow"] = response["Allow"]
        return replaced


class ApiHead(_Middleware):
    """HEAD under /api/ is GET without the body (RFC 9110; ninja routes one method per
    operation). Here, not per route: the OpenAPI document is not doubled and the headers
    are GET's byte for byte. Outside ApiJsonErrors, so an error's envelope is built first."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method != "HEAD" or not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        request.method = "GET"
        try:
            response = self.get_response(request)
        finally:
            request.method = "HEAD"  # what the outer middleware and the logs see
        if response.streaming:
            response.streaming_content = []  # type: ignore[attr-defined]  # streaming only
        elif isinstance(response, HttpResponse):
            response.setdefault("Content-Length", str(len(response.content)))
            # Django's ASGI handler sends whatever body it is given, even for HEAD.
            response.content = b""
        return response


class ContentSecurityPolicy(_Middleware):
    """``settings.KIROCREW_CSP`` on every response that sets none (an empty setting: none)."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        policy = settings.KIROCREW_CSP
        if policy and not response.has_header("Content-Security-Policy"):
            response["Content-Security-Policy"] = policy
        return response
