"""Common password shapes are redacted whole, wherever a row enters the store.

A value with a ";" or "&" inside ("p@ss;w0rd#tail", "Tr0ub4dor&3xyz"), a quoted passphrase
with a blank, a "(…)" inside a value, a password on a command line ("mysql -pS3cret",
"--password X", "redis-cli -a X", "docker login -p X", "curl -u user:pass") and "sk-" keys
were stored as typed (or with their tail kept) in assistant rows and imported tool rows.
"-p" as a port ("ssh -p 22", "docker run -p 8080:80") or a parent flag ("mkdir -p") is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.fixtures.personas import app_with_client
from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, copy_tree
from tests.transcripts.password_shapes import KEPT, SHAPES, leaked
from transcripts.core.keys import transcript_key_for_slot
from transcripts.core.redaction import redact_text
from transcripts.core.store import TranscriptStore
from transcripts.services.agent_import import agent_import_paths

API = "/api/chat/slots"
TAG = "[REDACTED: credential]"


@pytest.mark.parametrize(("text", "pieces"), SHAPES, ids=[s for s, _ in SHAPES])
def test_every_piece_of_a_password_shape_is_redacted(text: str, pieces: tuple[str, ...]) -> None:
    out, report = redact_text(text)
    assert TAG in out
    assert [p for p in pieces if p in out] == []
    assert report


@pytest.mark.parametrize("text", KEPT)
def test_ports_parent_flags_and_calls_are_kept(text: str) -> None:
    assert redact_text(text) == (text, {})


def test_the_key_after_a_password_in_a_form_body_is_kept() -> None:
    out, _ = redact_text("curl -d 'password=Tr0ub4dor9&user=bob' https://x.example.com/login")
    assert out == "curl -d 'password=[REDACTED: credential]&user=bob' https://x.example.com/login"


def test_a_long_quoted_text_is_not_a_passphrase() -> None:
    """A UI string under a password key is prose, not a passphrase (5+ words)."""
    text = '"password": "Password must contain 8 characters"'
    assert redact_text(text) == (text, {})


@pytest.mark.django_db
def test_assistant_rows_written_through_the_api_hold_no_password_shape(
    store: TranscriptStore,
) -> None:
    client: Client = app_with_client("shapes-app")[2]

    def call(method: str, path: str, body: Any) -> None:
        response = client.generic(method, path, json.dumps(body), content_type="application/json")
        assert response.status_code in {200, 201}, response.content

    call("POST", API, {"name": "shapes"})
    call("POST", f"{API}/shapes/turns", {"content": "set up the databases"})
    for text, _pieces in SHAPES:
        call("POST", f"{API}/shapes/rows", {"role": "assistant", "content": f"Ran: {text}"})
    on_disk = store.path(transcript_key_for_slot("shapes")).read_text()
    assert leaked(on_disk) == []
    assert on_disk.count(TAG) >= len(SHAPES)


def _claude_tool_lines(shapes: list[str]) -> str:
    """A Bash call per shape, its output echoing the shape (Claude Code's format)."""
    lines: list[dict[str, Any]] = []
    for i, text in enumerate(shapes):
        lines.append(
            {
                "type": "assistant",
                "sessionId": CLAUDE_SID,
                "uuid": f"pw-call-{i}",
                "message": {
                    "id": f"msg_pw_{i}",
                    "role": "assistant",
                    "stop_reason": "tool_use",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"toolu_pw_{i}",
                            "name": "Bash",
                            "input": {"command": text},
                        }
                    ],
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "sessionId": CLAUDE_SID,
                "uuid": f"pw-result-{i}",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_pw_{i}",
                            "content": f"$ {text}\nok",
                        }
                    ],
                },
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.mark.django_db
def test_imported_tool_rows_hold_no_password_shape(tmp_path: Path, store: TranscriptStore) -> None:
    src = copy_tree(tmp_path / "src")
    session = src / CLAUDE_FILE
    session.write_text(session.read_text() + _claude_tool_lines([s for s, _ in SHAPES]))

    agent_import_paths(paths=[src], fmt="auto")

    written = "".join(p.read_text() for p in store.keys_on_disk())
    assert "toolu_pw_0" in written  # the tool rows were imported
    assert leaked(written) == []
    assert session.read_text().count("S3cr3tP4ss") == 2  # the source is untouched
