"""CSRF: a logged-in dashboard user's unsafe request needs the token; an app's does not;
an anonymous request is 401 before any CSRF check."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from kirocrew_site.api import api
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot

from .conftest import Persona, error_of

UNSAFE_ROUTES = [
    ("POST", "/api/chat/slots", {"name": "new-slot"}),
    ("PATCH", "/api/chat/slots/s1", {"title": "x"}),
    ("DELETE", "/api/chat/slots/s1", None),
    ("POST", "/api/chat/slots/s1/turns", {"content": "q"}),
    ("POST", "/api/chat/slots/s1/rows", {"role": "assistant", "content": "a"}),
    ("POST", "/api/chat/slots/s1/turns/end", {"stop_reason": "end_turn"}),
    ("POST", "/api/chat/slots/s1/rewind", {"after_ts": "x"}),
    ("POST", "/api/chat/slots/s1/fork", {}),
    ("POST", "/api/chat/slots/s1/summary", None),
]


@pytest.fixture
def s1(make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=None)


def send(persona: Persona, method: str, path: str, body: Any, **kw: Any) -> Any:
    return persona.call(method, path, body if body is not None else {}, **kw)


@pytest.mark.parametrize(("method", "path", "body"), UNSAFE_ROUTES)
def test_a_dashboard_write_without_the_token_is_403_json(
    dashboard: Persona, s1: Slot, store: TranscriptStore, method: str, path: str, body: Any
) -> None:
    before = store.path("dashboard:s1").read_bytes()
    response = send(dashboard, method, path, body, csrf=False)
    assert response.status_code == 403
    assert error_of(response) == {"error": "CSRF verification failed", "code": "csrf_failed"}
    assert store.path("dashboard:s1").read_bytes() == before
    assert list(Slot.objects.values_list("name", flat=True)) == ["s1"]
    assert Slot.objects.get(name="s1").running is False


def test_a_wrong_token_is_403_too(dashboard: Persona, s1: Slot) -> None:
    response = dashboard.call(
        "POST",
        "/api/chat/slots/s1/turns",
        {"content": "q"},
        csrf=False,
        headers={"X-CSRFToken": "B" * 32},
    )
    assert response.status_code == 403
    assert error_of(response)["code"] == "csrf_failed"


def test_a_dashboard_write_with_the_token_succeeds(
    dashboard: Persona, staff: Persona, s1: Slot
) -> None:
    assert dashboard.call("POST", "/api/chat/slots/s1/turns", {"content": "q"}).status_code == 201
    assert dashboard.call("PATCH", "/api/chat/slots/s1", {"title": "t"}).status_code == 200
    assert dashboard.call("POST", "/api/chat/slots", {"name": "s2"}).status_code == 201
    # Past CSRF, a delete still needs staff (or the permission): see test_destructive_permissions.
    refused = dashboard.call("DELETE", "/api/chat/slots/s2")
    assert refused.status_code == 403
    assert error_of(refused)["code"] == "permission_denied"
    assert staff.call("DELETE", "/api/chat/slots/s2").status_code == 204


def test_the_token_from_a_real_page_works(dashboard: Persona, s1: Slot) -> None:
    """The browser flow: a page sets the csrftoken cookie; the script echoes it."""
    from django.contrib.auth import get_user_model

    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.get(username="dash"))
    assert client.get("/admin/login/").status_code == 200  # a form page: sets the cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/api/chat/slots/s1/turns",
        data=json.dumps({"content": "q"}),
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 201, response.content


def test_a_dashboard_read_needs_no_token(dashboard: Persona, s1: Slot) -> None:
    assert dashboard.call("GET", "/api/chat/slots/s1", csrf=False).status_code == 200
    assert dashboard.call("GET", "/api/chat/slots", csrf=False).status_code == 200


@pytest.mark.parametrize(("method", "path", "body"), UNSAFE_ROUTES)
def test_app_bearer_writes_need_no_csrf(
    owner: Persona, make_slot: Callable[..., Slot], method: str, path: str, body: Any
) -> None:
    make_slot("s1", app=owner.app)
    response = send(owner, method, path, body)  # enforce_csrf_checks=True client, no token
    assert response.status_code != 403, response.content
    assert response.status_code < 500


def test_a_bearer_wins_over_a_session_cookie_without_csrf(
    owner: Persona, dashboard: Persona, make_slot: Callable[..., Slot]
) -> None:
    """A logged-in browser that also sends an app token acts as the app (no CSRF needed)."""
    make_slot("s1", app=owner.app)
    response = dashboard.call(
        "POST",
        "/api/chat/slots/s1/turns",
        {"content": "q"},
        csrf=False,
        headers={"Authorization": f"Bearer {owner.token}"},
    )
    assert response.status_code == 201


@pytest.mark.parametrize(("method", "path", "body"), UNSAFE_ROUTES)
def test_anonymous_writes_are_401_not_403(
    anonymous: Persona, s1: Slot, method: str, path: str, body: Any
) -> None:
    response = send(anonymous, method, path, body)
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer ", "Bearer kc_not-a-real-token", "Basic dXNlcjpwdw==", "kc_x"]
)
def test_a_bad_bearer_is_401(anonymous: Persona, s1: Slot, header: str) -> None:
    response = anonymous.call(
        "POST", "/api/chat/slots/s1/turns", {"content": "q"}, headers={"Authorization": header}
    )
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


def test_every_operation_requires_a_caller() -> None:
    """Static: no route is mounted without auth; unsafe methods use the CSRF-checking
    session auth or a header bearer (which browsers do not send on their own)."""
    schema = api.get_openapi_schema()
    operations = [
        (method, path, op) for path, item in schema["paths"].items() for method, op in item.items()
    ]
    assert len(operations) >= 14
    for method, path, op in operations:
        schemes = {name for requirement in op.get("security", []) for name in requirement}
        assert schemes == {"AppBearer", "DashboardSession"}, (method, path)
        statuses = {str(status) for status in op["responses"]}
        assert "401" in statuses, (method, path)
        if method.upper() in {"POST", "PUT", "PATCH", "DELETE"}:
            assert "403" in statuses, (method, path)
    kinds = schema["components"]["securitySchemes"]
    assert kinds["AppBearer"]["type"] == "http"
    assert kinds["DashboardSession"]["in"] == "cookie"


def test_a_stale_session_cookie_is_401_not_403(anonymous: Persona, s1: Slot) -> None:
    """A logged-out browser still sends its old cookies: the answer is 401, never CSRF."""
    anonymous.client.cookies["sessionid"] = "expired-or-forged-session"
    anonymous.client.cookies["csrftoken"] = "C" * 32
    response = anonymous.call("POST", "/api/chat/slots/s1/turns", {"content": "q"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"
