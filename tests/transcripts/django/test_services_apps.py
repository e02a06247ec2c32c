"""App tokens: shown once, stored hashed, compared in constant time; the audit trail."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from transcripts.models import App, SecurityEvent
from transcripts.services import (
    AppExists,
    AppNameInvalid,
    app_authenticate,
    app_create,
    security_event_record,
)

pytestmark = pytest.mark.django_db


def test_create_returns_a_token_and_stores_only_its_hash():
    app, token = app_create(name="  ci-runner  ")
    assert app.name == "ci-runner"
    assert token.startswith("kc_")
    assert len(token) >= 40
    stored = App.objects.get(pk=app.pk)
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert stored.token_prefix == token[:8]
    values = App.objects.values_list("name", "token_hash", "token_prefix").get()
    assert all(token not in str(value) for value in values)


def test_tokens_differ_per_app():
    assert app_create(name="a")[1] != app_create(name="b")[1]


def test_authenticate(monkeypatch):
    app, token = app_create(name="alice")
    compared = []
    real = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert app_authenticate(token=token) == app
    assert compared == [(app.token_hash, app.token_hash)]  # hashes, never the token
    for wrong in ("", token[:-1], token + "x", "kc_" + "A" * 43, "Bearer " + token, "x" * 10_000):
        assert app_authenticate(token=wrong) is None


def test_duplicate_and_invalid_names():
    app_create(name="alice")
    with pytest.raises(AppExists):
        app_create(name="alice")
    for bad in ("", "   ", "x" * 101, "tab\there"):
        with pytest.raises(AppNameInvalid):
            app_create(name=bad)
    assert App.objects.count() == 1


def test_security_event_record_clips_long_values():
    security_event_record(
        caller="app:alice", operation="slot_read", source="127.0.0.1", resource="x" * 1000
    )
    event = SecurityEvent.objects.get()
    assert (event.outcome, event.operation, event.caller) == ("denied", "slot_read", "app:alice")
    assert len(event.resource) == 300
    assert event.resource.endswith("…")
    assert str(event) == f"slot_read denied by app:alice on {event.resource}"
    assert SecurityEvent.objects.count() == 1
