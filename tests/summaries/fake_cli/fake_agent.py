"""A fake agent CLI (``claude`` or ``codex``, by the name it was run as): a real
executable that speaks the documented output shapes and misbehaves on request.

``claude -p --output-format json``: one result object on stdout. ``codex exec -o FILE -``:
the final message in FILE, progress on stderr. Both read the prompt from stdin and, like
the real ones, write a session file where ``import_transcripts`` looks (under $HOME)
unless told not to persist (``--no-session-persistence`` / ``--ephemeral``).

Steered by the environment: FAKE_CLI_MODE (reply, hang, hang_with_child, fail, garbage,
huge, error_result, stderr_flood), FAKE_CLI_REPLY (the reply text), FAKE_CLI_RECORD (a
folder to write argv.json, stdin.txt, env.json, cwd.txt and pids into), FAKE_CLI_SESSION
(a session file to copy where the real CLI would write one).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

AGENT = os.environ.get("FAKE_CLI_AGENT") or Path(sys.argv[0]).name
ARGS = sys.argv[1:]
MODE = os.environ.get("FAKE_CLI_MODE", "reply")
REPLY = os.environ.get("FAKE_CLI_REPLY", '{"intents": []}')
RECORD = os.environ.get("FAKE_CLI_RECORD")


def record(name: str, value: str) -> None:
    if RECORD:
        (Path(RECORD) / name).write_text(value)


def persist() -> None:
    """Where the real CLI writes its session, unless told not to."""
    session = os.environ.get("FAKE_CLI_SESSION")
    if not session:
        return
    home = Path(os.environ["HOME"])
    sid = str(uuid.uuid4())
    if AGENT == "claude" and "--no-session-persistence" not in ARGS:
        folder = home / ".claude" / "projects" / os.getcwd().replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(session, folder / f"{sid}.jsonl")
    if AGENT == "codex" and "--ephemeral" not in ARGS:
        folder = home / ".codex" / "sessions" / "2026" / "12" / "06"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(session, folder / f"rollout-2026-12-06T00-00-00-{sid}.jsonl")


def answer(text: str) -> None:
    if AGENT == "claude":
        result = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 12,
            "num_turns": 1,
            "result": text,
            "session_id": str(uuid.uuid4()),
            "total_cost_usd": 0.0,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        sys.stdout.write(json.dumps(result))
    else:
        sys.stderr.write("codex: thinking...\n")
        out = ARGS[ARGS.index("-o") + 1]
        Path(out).write_text(text)
        sys.stdout.write(text)


def main() -> int:
    prompt = sys.stdin.read()
    record("argv.json", json.dumps(sys.argv))
    record("stdin.txt", prompt)
    record("env.json", json.dumps(dict(os.environ)))
    record("cwd.txt", os.getcwd())
    record("pid", str(os.getpid()))
    persist()
    if MODE in ("hang", "hang_with_child"):
        if MODE == "hang_with_child":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            record("child_pid", str(child.pid))
        record("hanging", "1")
        time.sleep(600)
        return 0
    if MODE == "fail":
        # A long stderr whose last lines hold the reason, a secret among them.
        sys.stderr.write("Error: starting\n" + "x" * 50_000 + "\n")
        sys.stderr.write("Error: not logged in. token=sk-ant-api03-" + "Q" * 40 + "\n")
        sys.stderr.write("the last line\n")
        return 2
    if MODE == "garbage":
        sys.stdout.write("<html><body>Service Unavailable</body></html>")
        return 0
    if MODE == "huge":
        sys.stdout.write("y" * (3 * 1024 * 1024))
        return 0
    if MODE == "error_result" and AGENT == "claude":
        sys.stdout.write(
            json.dumps(
                {
                    "type": "result",
                    "subtype": "error_max_turns",
                    "is_error": True,
                    "session_id": "s",
                }
            )
        )
        return 0
    if MODE == "stderr_flood":
        sys.stderr.write("z" * (4 * 1024 * 1024))
    answer(REPLY)
    return 0


if __name__ == "__main__":
    sys.exit(main())
