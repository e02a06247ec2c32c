"""Search test helpers: apps and a dashboard user driving the real URLs (Django's test
``Client``), on a committing database so the after-commit announcements really run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.fixtures.personas import app_with_client, dashboard_client


@dataclass
class Caller:
    client: Client

    def post(self, path: str, body: Any) -> Any:
        response = self.client.post(path, json.dumps(body), content_type="application/json")
        assert response.status_code in (200, 201), (path, response.status_code, response.content)
        return response.json()

    def search(self, q: str, **params: Any) -> Any:
        return self.client.get("/api/chat/search", {"q": q, **params})

    def found(self, q: str) -> list[dict[str, Any]]:
        response = self.search(q)
        assert response.status_code == 200, response.content
        hits: list[dict[str, Any]] = response.json()["hits"]
        return hits

    def turn(self, slot: str, question: str, *answers: str) -> list[str]:
        """One turn through the turn API: the question, the answers, a clean end."""
        stamps = [self.post(f"/api/chat/slots/{slot}/turns", {"content": question})["ts"]]
        for answer in answers:
            body = {"role": "assistant", "content": answer}
            stamps.append(self.post(f"/api/chat/slots/{slot}/rows", body)["ts"])
        self.post(f"/api/chat/slots/{slot}/turns/end", {"stop_reason": "end_turn"})
        return stamps


@pytest.fixture
def apps(offline_home: Path, transactional_db: None) -> tuple[Caller, Caller]:
    """Two apps, each with one slot of its own (``alpha-1``, ``beta-1``)."""
    _, _, alpha = app_with_client("alpha")
    _, _, beta = app_with_client("beta")
    first, second = Caller(alpha), Caller(beta)
    first.post("/api/chat/slots", {"name": "alpha-1", "title": "Alpha work"})
    second.post("/api/chat/slots", {"name": "beta-1", "title": "Beta work"})
    return first, second


@pytest.fixture
def dashboard(apps: tuple[Caller, Caller]) -> Caller:
    return Caller(dashboard_client())
