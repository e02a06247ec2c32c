"""NUL (U+0000) on real PostgreSQL, which cannot store it in text or jsonb: every API input
holding one is a 422 JSON error before a byte is written (so the name stays free and the
mirror never drifts), and the dashboard's list filters drop it instead of failing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from tests.fixtures.personas import app_with_client, dashboard_client
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot

pytestmark = [pytest.mark.services]

NUL_TITLE = '{"name": "nul1", "title": "a\\u0000b"}'


@pytest.fixture
def store(services_home: Path, on_postgres: None) -> TranscriptStore:
    from transcripts.runtime import get_store

    return get_store()


def test_slot_create_with_nul_is_422_and_the_name_stays_free(store: TranscriptStore) -> None:
    _, _, client = app_with_client("pg-app")
    response = client.post("/api/chat/slots", NUL_TITLE, content_type="application/json")
    assert response.status_code == 422
    assert json.loads(response.content)["code"] == "invalid_request"
    assert not store.path("dashboard:nul1").exists()
    assert client.get("/api/chat/slots/nul1").status_code == 404
    again = client.post(
        "/api/chat/slots", {"name": "nul1", "title": "ab"}, content_type="application/json"
    )
    assert again.status_code == 201
    assert Slot.objects.get(name="nul1").session.title == "ab"


def test_patch_and_rows_with_nul_are_422_and_nothing_drifts(store: TranscriptStore) -> None:
    _, _, client = app_with_client("pg-app")
    created = client.post(
        "/api/chat/slots", {"name": "nul2", "title": "t"}, content_type="application/json"
    )
    assert created.status_code == 201
    path = store.path("dashboard:nul2")
    before = path.read_bytes()
    for method, url, raw in (
        ("PATCH", "/api/chat/slots/nul2", '{"title": "a\\u0000b"}'),
        ("POST", "/api/chat/slots/nul2/turns", '{"content": "a\\u0000b"}'),
        ("POST", "/api/chat/slots/nul2/rows", '{"role": "tool", "content": "a\\u0000b"}'),
        (
            "POST",
            "/api/chat/slots/nul2/rows",
            '{"role": "tool", "content": "x", "meta": {"k": "\\u0000"}}',
        ),
    ):
        response = client.generic(method, url, raw, content_type="application/json")
        assert response.status_code == 422, (url, response.content[:200])
        assert json.loads(response.content)["code"] == "invalid_request"
    assert path.read_bytes() == before
    session = Session.objects.get(key="dashboard:nul2")
    assert session.title == "t"
    assert not Slot.objects.get(name="nul2").running


def test_dashboard_filters_drop_nul(store: TranscriptStore) -> None:
    client = dashboard_client()
    for query in ("q=%00", "q=a%00b", "app=%00", "state=%00"):
        page = client.get(f"/?{query}")
        assert page.status_code == 200, query
        assert page["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("model", ["app", "session", "slot", "securityevent"])
def test_admin_search_drops_nul(store: TranscriptStore, admin_client: Client, model: str) -> None:
    page = admin_client.get(reverse(f"admin:transcripts_{model}_changelist"), {"q": "a\x00b"})
    assert page.status_code == 200
