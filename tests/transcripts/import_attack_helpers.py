"""Records and runs shared by the import attack tests (``test_import_hostile_*``)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import CommandError, call_command

from transcripts.core.store import TranscriptStore

SID = "5f0c8a4e-2b1d-4c3e-9a7f-000000000001"
CODEX_ID = "019a7c3e-1111-7222-8333-000000000001"
GH_TOKEN = "ghp_" + "Zq8wR2mK5vT1xY7bN3cD9fG4hJ6kL0pQ2sA8"  # 36 chars after the prefix


def run(*args: str) -> tuple[int, str]:
    """(exit code, stdout): 0, or the CommandError's return code."""
    out = StringIO()
    try:
        call_command("import_transcripts", *args, stdout=out, stderr=StringIO())
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


def jl(*records: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def claude(kind: str, n: int, sid: str = SID, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": kind,
        "sessionId": sid,
        "uuid": f"u-{n}",
        "timestamp": f"2026-11-30T10:00:{n:02d}.000Z",
        "cwd": "/home/ann/src/proj",
        "gitBranch": "main",
        "version": "2.0.1",
        "isSidechain": False,
    }
    rec.update(extra)
    return rec


def prompt(n: int, text: str, sid: str = SID, **extra: Any) -> dict[str, Any]:
    return claude("user", n, sid, message={"role": "user", "content": text}, **extra)


def reply(n: int, text: str, sid: str = SID, **extra: Any) -> dict[str, Any]:
    message = {
        "id": f"msg_{n}",
        "role": "assistant",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": text}],
    }
    return claude("assistant", n, sid, message=message, **extra)


def bash_call(n: int, call_id: Any, command: str) -> dict[str, Any]:
    message = {
        "id": f"msg_{n}",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
        ],
    }
    return claude("assistant", n, message=message)


def bash_result(n: int, call_id: Any, text: str, is_error: bool) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}
    return claude("user", n, message={"role": "user", "content": [block]})


def codex_meta(sid: str = CODEX_ID, **payload: Any) -> dict[str, Any]:
    body = {"id": sid, "cwd": "/home/ann/src/proj", "cli_version": "0.50.0", "originator": "cli"}
    body.update(payload)
    return {"timestamp": "2026-11-30T11:00:00Z", "type": "session_meta", "payload": body}


def codex_item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-30T11:00:01Z", "type": "response_item", "payload": payload}


def codex_event(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-30T11:00:02Z", "type": "event_msg", "payload": payload}


def codex_user(text: str) -> dict[str, Any]:
    return codex_event({"type": "user_message", "message": text})


def codex_assistant(text: str) -> dict[str, Any]:
    return codex_item(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    )


def store_text(store: TranscriptStore) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(store.root.rglob("*.jsonl")))


def all_store_bytes(store: TranscriptStore) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(store.root.rglob("*")) if p.is_file())


def contents(store: TranscriptStore, key: str) -> list[str]:
    return [str(r.get("content")) for r in store.read_session(key).rows]


def project_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "src" / "projects" / "-home-ann-src-proj"
    folder.mkdir(parents=True)
    return folder


def bulk_tree(tmp_path: Path, count: int = 9) -> tuple[Path, list[str]]:
    """``count`` new Claude sessions in one folder: enough for the bulk path."""
    src = project_dir(tmp_path)
    sids = [f"5f0c8a4e-2b1d-4c3e-9a7f-{n:012d}" for n in range(count)]
    for sid in sids:
        (src / f"{sid}.jsonl").write_text(
            jl(prompt(1, f"hello {sid}", sid), reply(2, f"hi {sid}", sid))
        )
    return src, sids
