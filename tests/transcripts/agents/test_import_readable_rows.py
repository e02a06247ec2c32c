"""Imported rows read as what happened: Codex's apply_patch names the files it patched,
Claude's subagent task reads as its description and prompt, a slash command as the
command typed, and a session the person or Claude Code named keeps that name."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from transcripts.models import Session
from transcripts.runtime import get_store

pytestmark = pytest.mark.django_db

SID = "7d1e2f30-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
CWD = "/home/dev/shop"


def claude(kind: str, n: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}" if n > 1 else None,
        "sessionId": SID,
        "cwd": CWD,
        "timestamp": f"2026-12-01T09:{n:02d}:00.000Z",
        "isSidechain": False,
        **fields,
    }


def write_claude(root: Path, *extra: dict[str, Any]) -> Path:
    project = root / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    records = [
        claude("user", 1, message={"role": "user", "content": clear_command()}),
        claude("user", 2, message={"role": "user", "content": "Find why the export drops rows"}),
        claude(
            "assistant",
            3,
            message={
                "id": "m3",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Task",
                        "input": {
                            "description": "Search the exporter",
                            "prompt": "Look through shop/export.py for skipped rows.",
                            "subagent_type": "general-purpose",
                        },
                    }
                ],
                "stop_reason": "tool_use",
            },
        ),
        *extra,
    ]
    path = project / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def clear_command() -> str:
    return (
        "<command-name>/clear</command-name>\n"
        "<command-message>clear</command-message>\n<command-args></command-args>"
    )


def rows_of(key: str) -> list[dict[str, Any]]:
    return get_store().read_session(key).rows


def imported(path: Path) -> None:
    call_command("import_transcripts", "--format", "auto", str(path), stdout=StringIO())


def test_a_claude_subagent_task_reads_as_its_description_and_prompt(
    tmp_path: Path, store: Any
) -> None:
    imported(write_claude(tmp_path))
    call = next(r for r in rows_of(f"claude:{SID}") if r["role"] == "tool_call")
    assert call["content"].splitlines()[0] == "Task (general-purpose): Search the exporter"
    assert "Look through shop/export.py for skipped rows." in call["content"]
    assert "{" not in call["content"]  # no raw JSON


def test_a_slash_command_reads_as_the_command(tmp_path: Path, store: Any) -> None:
    imported(write_claude(tmp_path))
    notice = rows_of(f"claude:{SID}")[0]
    assert (notice["role"], notice["content"]) == ("notice", "/clear")
    assert notice["meta"]["kind"] == "command"


def test_the_session_keeps_the_name_it_was_given(tmp_path: Path, store: Any) -> None:
    renamed = {"type": "custom-title", "customTitle": "CSV export drops rows", "sessionId": SID}
    imported(write_claude(tmp_path, renamed))
    assert Session.objects.get(key=f"claude:{SID}").title == "CSV export drops rows"


def test_claude_codes_summary_record_names_the_session(tmp_path: Path, store: Any) -> None:
    named = {"type": "summary", "summary": "Export drops accented rows", "leafUuid": "u3"}
    imported(write_claude(tmp_path, named))
    assert Session.objects.get(key=f"claude:{SID}").title == "Export drops accented rows"


def test_a_codex_apply_patch_names_the_files_it_patched(tmp_path: Path, store: Any) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    cid = "019a8d4f-2222-7333-8444-955566667777"
    patch = (
        "*** Begin Patch\n*** Update File: shop/export.py\n@@\n-a\n+b\n"
        "*** Add File: tests/test_export.py\n+def test(): pass\n*** End Patch"
    )
    records = [
        {"type": "session_meta", "payload": {"id": cid, "cwd": CWD}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "Fix the export"}},
        {
            "type": "response_item",
            "payload": {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "c1",
                "input": patch,
            },
        },
    ]
    for n, record in enumerate(records):
        record["timestamp"] = f"2026-12-01T09:{n:02d}:00.000Z"
    path = day / f"rollout-2026-12-01T09-00-00-{cid}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    imported(path)
    call = next(r for r in rows_of(f"codex:{cid}") if r["role"] == "tool_call")
    first = call["content"].splitlines()[0]
    assert first == "apply_patch update shop/export.py, add tests/test_export.py"
    assert "*** Update File: shop/export.py" in call["content"]  # the patch itself is kept
