"""Choosing the summary backend on the settings page: the listing finds a real local
OpenAI-compatible server (loopback) and a ``claude`` on PATH without sending a prompt;
Test sends ONE short request through the real backend; Use stores the pick in config.json,
where it wins over KIROCREW_SUMMARY_MODEL; only staff may do either."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from summaries.core.backends import OpenAIBackend
from summaries.runtime import summary_backend
from summaries.services import PassOutcome, PassResult, summary_generate
from tests.summaries.django.conftest import VALID_REPLY
from tests.summaries.fake_cli_fixture import FakeCli
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer, closed_port

pytestmark = pytest.mark.django_db

SECRET_KEY_VALUE = "sk-configured-openai-key-never-for-a-local-server"


@pytest.fixture
def local(settings: Any, store: Any, fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    """The fake server listed as a local model server, with a dead address beside it."""
    fake_openai.models = ("fake-llama", "fake-qwen")
    settings.KIROCREW_LOCAL_MODEL_URLS = [
        f"http://127.0.0.1:{closed_port()}/v1",
        fake_openai.base_url,
    ]
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    settings.KIROCREW_OPENAI_BASE_URL = "https://api.example.invalid/v1"
    settings.KIROCREW_OPENAI_API_KEY = SECRET_KEY_VALUE
    settings.ANTHROPIC_API_KEY = ""
    return fake_openai


def _token(client: Client) -> str:
    client.get("/settings/")
    return client.cookies["csrftoken"].value


def _post(client: Client, what: str, **form: str) -> Any:
    form["csrfmiddlewaretoken"] = _token(client)
    return client.post(f"/settings/backend/{what}/", form)


def test_the_listing_shows_a_local_servers_models_and_sends_no_prompt(
    staff_client: Client, local: FakeOpenAIServer
) -> None:
    body = staff_client.get("/settings/").content.decode()
    assert "<code>openai:fake-llama</code>" in body
    assert "<code>openai:fake-qwen</code>" in body
    assert f"local server at {local.base_url}" in body
    assert "<code>heuristic</code>" in body  # the configured one
    sent = [(r.method, r.path) for r in local.requests]
    assert sent == [("GET", "/v1/models")]  # the model list only: nothing spent


def test_a_server_that_does_not_answer_in_time_is_left_out(
    staff_client: Client, local: FakeOpenAIServer, settings: Any
) -> None:
    with FakeOpenAIServer() as slow:
        slow.default = Behaviour.sleep(10, Behaviour.json({"data": [{"id": "slow-model"}]}))
        settings.KIROCREW_LOCAL_MODEL_URLS = [slow.base_url, local.base_url]
        body = staff_client.get("/settings/").content.decode()
    assert "slow-model" not in body
    assert "<code>openai:fake-llama</code>" in body


def test_claude_on_path_and_an_anthropic_key_are_offered(
    staff_client: Client, local: FakeOpenAIServer, fake_cli: FakeCli, settings: Any
) -> None:
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    body = staff_client.get("/settings/").content.decode()
    assert "<code>claude-cli</code>" in body
    assert f"claude on PATH ({fake_cli.bin / 'claude'})" in body
    assert "<code>anthropic:</code>" in body
    assert "sk-ant-test" not in body


def test_nothing_found_offers_only_the_configured_backend(
    staff_client: Client, local: FakeOpenAIServer, settings: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    settings.KIROCREW_LOCAL_MODEL_URLS = []
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude, no codex
    body = staff_client.get("/settings/").content.decode()
    assert "claude-cli" not in body
    assert "anthropic:" not in body
    assert "openai:" not in body


def test_test_sends_one_short_request_and_reports_model_and_latency(
    staff_client: Client, local: FakeOpenAIServer
) -> None:
    local.enqueue(Behaviour.reply('{"ok": true}'))
    response = _post(staff_client, "test", spec="openai:fake-llama", base_url=local.base_url)
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["model"] == "openai:fake-llama"
    assert isinstance(body["latency_ms"], int)
    assert body["text"] == f"openai:fake-llama answered in {body['latency_ms']} ms."
    posts = [r for r in local.requests if r.method == "POST"]
    assert len(posts) == 1
    assert posts[0].path == "/v1/chat/completions"
    assert posts[0].json["model"] == "fake-llama"
    assert '{"ok": true}' in posts[0].json["messages"][-1]["content"]
    # The configured OpenAI key belongs to its own server, never to one found on loopback.
    assert "authorization" not in posts[0].headers


def test_a_failing_backend_is_reported_in_plain_words(
    staff_client: Client, local: FakeOpenAIServer
) -> None:
    local.enqueue(Behaviour.error(404, code="model_not_found", message="echo of the prompt"))
    body = _post(staff_client, "test", spec="openai:gone", base_url=local.base_url).json()
    assert body["ok"] is False
    assert "refused the request" in body["text"]
    assert "HTTP 404 (model_not_found)" in body["text"]
    assert "echo of the prompt" not in body["text"]


def test_test_runs_a_claude_on_path(staff_client: Client, local: Any, fake_cli: FakeCli) -> None:
    fake_cli.mode("reply", '{"ok": true}')
    body = _post(staff_client, "test", spec="claude-cli").json()
    assert body["ok"] is True
    assert body["model"] == "claude-cli"
    assert '{"ok": true}' in fake_cli.recorded("stdin.txt")


def test_use_stores_the_pick_which_then_writes_summaries(
    staff_client: Client, local: FakeOpenAIServer, make_slot: Any, settings: Any
) -> None:
    response = _post(staff_client, "use", spec="openai:fake-llama", base_url=local.base_url)
    body = response.json()
    assert body["model"] == "openai:fake-llama"
    assert "Session summaries are off" in body["text"]  # nothing spends tokens yet
    stored = json.loads(Path(settings.KIROCREW_CONFIG_PATH).read_text())
    assert stored["summary_backend"] == {"spec": "openai:fake-llama", "base_url": local.base_url}
    assert local.requests == [r for r in local.requests if r.method == "GET"]  # Use sent nothing

    backend = summary_backend()
    assert isinstance(backend, OpenAIBackend)
    assert backend.name == "openai:fake-llama"
    assert 'Summaries are written by <code id="backend-in-use">openai:fake-llama</code>' in (
        staff_client.get("/settings/").content.decode()
    )

    staff_client.post("/settings/", {"enabled": "on", "csrfmiddlewaretoken": _token(staff_client)})
    local.default = Behaviour.reply(VALID_REPLY)
    make_slot("picked")
    assert summary_generate(slot_name="picked", force=True) == PassOutcome(PassResult.STORED)
    panel = staff_client.get("/s/picked/summary/").json()
    assert panel["model"] == "openai:fake-llama"
    assert panel["written_by"] == {"label": "Written by openai:fake-llama", "estimate": False}


def test_without_a_pick_the_environment_decides_and_reset_returns_to_it(
    staff_client: Client, local: FakeOpenAIServer, settings: Any
) -> None:
    assert summary_backend().name == "heuristic"
    _post(staff_client, "use", spec="claude-cli")
    assert summary_backend().name == "claude-cli"
    body = _post(staff_client, "use", reset="1").json()
    assert body["model"] == "heuristic"
    assert "KIROCREW_SUMMARY_MODEL" in body["text"]
    assert summary_backend().name == "heuristic"
    assert "summary_backend" not in json.loads(Path(settings.KIROCREW_CONFIG_PATH).read_text())


@pytest.mark.parametrize(
    ("form", "words"),
    [
        ({"spec": "gpt-5"}, "unknown KIROCREW_SUMMARY_MODEL"),
        ({"spec": "anthropic:", "model": ""}, "type the model name"),
        ({"spec": "anthropic:", "model": "claude-x"}, "needs ANTHROPIC_API_KEY"),
        ({"spec": "openai:m", "base_url": "http://169.254.169.254/v1"}, "not one this page"),
        ({"spec": "claude-cli", "base_url": "http://127.0.0.1:11434/v1"}, "not one this page"),
    ],
)
def test_a_bad_pick_is_a_clear_json_error_and_stores_nothing(
    staff_client: Client, local: FakeOpenAIServer, settings: Any, form: dict[str, str], words: str
) -> None:
    for what in ("test", "use"):
        response = _post(staff_client, what, **form)
        assert response.status_code == 422
        assert response.json()["code"] == "invalid_backend"
        assert words in response.json()["error"]
    assert not Path(settings.KIROCREW_CONFIG_PATH).exists()
    assert [r.method for r in local.requests] == ["GET"] * len(local.requests)


def test_only_staff_may_test_or_use(
    client_in: Client, local: FakeOpenAIServer, settings: Any
) -> None:
    for what in ("test", "use"):
        response = client_in.post(f"/settings/backend/{what}/", {"spec": "claude-cli"})
        assert response.status_code == 403
        assert response.json()["code"] == "staff_only"
    assert not Path(settings.KIROCREW_CONFIG_PATH).exists()
    assert local.requests == []


def test_the_posts_need_the_csrf_token(
    staff_client: Client, local: FakeOpenAIServer, settings: Any
) -> None:
    for what in ("test", "use"):
        assert (
            staff_client.post(f"/settings/backend/{what}/", {"spec": "heuristic"}).status_code
            == 403
        )
    assert not Path(settings.KIROCREW_CONFIG_PATH).exists()


def test_summaries_are_off_until_someone_turns_them_on(
    staff_client: Client, local: FakeOpenAIServer
) -> None:
    assert ">off<" in staff_client.get("/settings/").content.decode()


def test_a_heuristic_summary_reads_as_an_offline_estimate(
    client_in: Client, enabled_summaries: Path, make_slot: Any, settings: Any
) -> None:
    settings.KIROCREW_SUMMARY_MODEL = "heuristic"
    make_slot("offline")
    assert summary_generate(slot_name="offline", force=True) == PassOutcome(PassResult.STORED)
    panel = client_in.get("/s/offline/summary/").json()
    assert panel["model"] == "heuristic"
    assert panel["written_by"] == {"label": "Offline estimate", "estimate": True}
