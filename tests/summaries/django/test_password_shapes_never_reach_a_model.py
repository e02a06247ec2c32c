"""Common password shapes never reach a model server.

A real model server (here the loopback OpenAI-compatible fake) received
``BILLING_KEY=sk-live-<hex>``, a bare ``sk-<hex>`` and passwords such as
``mysql -pS3cret`` as pasted. User rows are stored as typed; the extraction redacts every
kept row before the prompt is built, so the request body holds no piece of any shape,
whether a person pasted it or an assistant or tool row repeated it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.fixtures.personas import app_with_client
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer
from tests.summaries.secret_samples import json_text
from tests.transcripts.password_shapes import SHAPES, leaked
from transcripts.core.store import TranscriptStore

pytestmark = pytest.mark.django_db

API = "/api/chat/slots"
REPLY = json.dumps(
    {
        "intents": [
            {
                "title": "Set up the databases",
                "initial_intent": "Set up the databases.",
                "progress": [],
                "next_steps": [],
                "ranges": [[1, 1]],
                "status": "active",
            }
        ],
        "constraints": [],
    }
)


def call(client: Client, method: str, path: str, body: Any = None) -> None:
    data = json.dumps(body) if body is not None else ""
    response = client.generic(method, path, data, content_type="application/json")
    assert response.status_code in {200, 201}, (path, response.status_code, response.content)


def test_no_password_shape_reaches_the_model_server(
    store: TranscriptStore, enabled_summaries: Path, openai_model: FakeOpenAIServer
) -> None:
    client = app_with_client("shapes-model-app")[2]
    name = "shapes"
    call(client, "POST", API, {"name": name})
    markers = []
    for i, (text, _pieces) in enumerate(SHAPES):
        marker = f"step-{i:02d}"
        markers.append(marker)
        said = f"{marker}: please run {text} on staging"
        if i == 0:
            call(client, "POST", f"{API}/{name}/turns", {"content": said})
        else:  # further user rows of the same turn: one model call covers them all
            call(client, "POST", f"{API}/{name}/rows", {"role": "user", "content": said})
    call(client, "POST", f"{API}/{name}/rows", {"role": "assistant", "content": "Done."})
    call(client, "POST", f"{API}/{name}/turns/end", {"stop_reason": "end_turn"})
    openai_model.enqueue(Behaviour.reply(REPLY))

    call(client, "POST", f"{API}/{name}/summary")

    [request] = openai_model.requests
    prompt = request.json["messages"][-1]["content"]
    assert all(marker in prompt for marker in markers)  # every row was sent
    assert leaked(json_text(request.body)) == []
