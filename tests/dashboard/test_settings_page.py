"""The settings page: staff only, CSRF-protected, config.json written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_non_staff_is_refused(client_in: Client, kirocrew_home: Path) -> None:
    assert client_in.get("/settings/").status_code == 403
    assert client_in.post("/settings/", {"enabled": "on"}).status_code == 403
    assert not (kirocrew_home / "config.json").exists()


def test_staff_sees_the_effective_config(staff_client: Client, kirocrew_home: Path) -> None:
    (kirocrew_home / "config.json").write_text(
        json.dumps({"session_summary": {"min_user_turns": 0, "max_intents": 7}})
    )
    body = staff_client.get("/settings/").content.decode()
    assert "Session summaries are <span" in body
    assert ">off<" in body
    assert "<code>min_user_turns</code></dt><dd><code>1</code>" in body  # clamped
    assert "<code>max_intents</code></dt><dd><code>7</code>" in body
    assert "Turn session summaries on" in body


def test_toggle_needs_the_csrf_token(staff_client: Client, kirocrew_home: Path) -> None:
    response = staff_client.post("/settings/", {"enabled": "on"})
    assert response.status_code == 403
    assert not (kirocrew_home / "config.json").exists()


def _token(client: Client) -> str:
    client.get("/settings/")
    return client.cookies["csrftoken"].value


def test_toggle_writes_config_atomically_keeping_other_keys(
    staff_client: Client, kirocrew_home: Path
) -> None:
    path = kirocrew_home / "config.json"
    path.write_text(json.dumps({"agent": {"model": "x"}, "session_summary": {"max_intents": 9}}))
    path.chmod(0o640)
    inode = path.stat().st_ino
    token = _token(staff_client)
    response = staff_client.post("/settings/", {"enabled": "on", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert response["Location"] == "/settings/"
    data = json.loads(path.read_text())
    assert data == {"agent": {"model": "x"}, "session_summary": {"max_intents": 9, "enabled": True}}
    assert path.stat().st_ino != inode  # replaced, never rewritten in place
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in kirocrew_home.iterdir() if p.name.startswith(".config")] == []
    page = staff_client.get("/settings/").content.decode()
    assert "turned on" in page
    assert ">on<" in page

    staff_client.post("/settings/", {"enabled": "off", "csrfmiddlewaretoken": token})
    assert json.loads(path.read_text())["session_summary"]["enabled"] is False


def test_a_broken_config_is_not_overwritten(staff_client: Client, kirocrew_home: Path) -> None:
    path = kirocrew_home / "config.json"
    path.write_text("{not json")
    token = _token(staff_client)
    response = staff_client.post(
        "/settings/", {"enabled": "on", "csrfmiddlewaretoken": token}, follow=True
    )
    assert "config.json was not changed" in response.content.decode()
    assert path.read_text() == "{not json"


def test_env_override_is_shown(
    staff_client: Client, kirocrew_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIROCREW_SUMMARY_ENABLED", "1")
    body = staff_client.get("/settings/").content.decode()
    assert "KIROCREW_SUMMARY_ENABLED=1" in body
    assert ">on<" in body


def test_bad_value_changes_nothing(staff_client: Client, kirocrew_home: Path) -> None:
    token = _token(staff_client)
    staff_client.post("/settings/", {"enabled": "maybe", "csrfmiddlewaretoken": token})
    assert not (kirocrew_home / "config.json").exists()
