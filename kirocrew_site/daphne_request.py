"""Daphne hands the application every request body as it came.

Twisted's HTTP request (daphne's ``WebRequest`` is one) parses a POST's multipart or
form body into ``request.args`` before daphne sees the request, and answers a body it
cannot parse with a bare ``400 Bad Request`` (no headers, no body) itself, so the API
never saw it and could not give its JSON envelope. Daphne never reads ``request.args``
(it passes the raw body to the ASGI application, and Django parses what it needs), so the
parse only cost memory. Twisted 24.7+ lets a request skip it (``parsePOSTFormSubmission``);
daphne builds its requests from the module global ``WebRequest``, so it is replaced here
by a subclass that skips it. Called from asgi.py, which daphne imports before it listens.
"""

from __future__ import annotations

from typing import Any

from daphne import http_protocol


class RawBodyWebRequest(http_protocol.WebRequest):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)


def daphne_raw_bodies() -> None:
    """Make daphne's HTTP requests skip Twisted's form parsing (idempotent)."""
    http_protocol.WebRequest = RawBodyWebRequest
