"""``claude-cli`` / ``claude-cli:<model>``: Claude Code in print mode, as its user is
logged in.

``claude -p --output-format json --no-session-persistence [--model M]`` with the prompt
on stdin; the answer is one JSON object, ``{"type": "result", "subtype": "success",
"is_error": false, "result": "<the reply>", "session_id": ..., ...}``. Any other subtype
(``error_max_turns``, ``error_during_execution``) or ``is_error`` is a failed call. The
process rules (stdin, process group, environment, stderr) are ``cli.CliRun``'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, Protocol

from .base import BackendBadReply
from .cli import CliBackend, CliRun, command_words

#: Print mode, one JSON result object, and no session file left in ~/.claude/projects
#: (which ``import_transcripts`` reads).
FLAGS: Final = ("-p", "--output-format", "json", "--no-session-persistence")


class ClaudeCliSettings(Protocol):
    KIROCREW_CLAUDE_CLI: str
    KIROCREW_CLI_TIMEOUT: float


class ClaudeCliBackend(CliBackend):
    KIND = "claude-cli"

    def argv(self) -> list[str]:
        model = ["--model", self.model] if self.model else []
        return [*self.command, *FLAGS, *model]

    def generate(self, prompt: str, turns: Sequence[Any]) -> str:
        with CliRun(self.name, self.argv(), prompt, timeout=self.timeout) as run:
            result = run.run()
        return _result_text(result.stdout)


def _result_text(stdout: bytes) -> str:
    try:
        payload = json.loads(stdout)
    except ValueError as exc:
        raise BackendBadReply("claude-cli output is not JSON") from exc
    if not isinstance(payload, dict) or payload.get("type") != "result":
        raise BackendBadReply("claude-cli output is not a result object")
    subtype = payload.get("subtype")
    if payload.get("is_error") is True or subtype != "success":
        shown = subtype if isinstance(subtype, str) and subtype.isidentifier() else "error"
        raise BackendBadReply(f"claude-cli reported {shown}")
    text = payload.get("result")
    if not isinstance(text, str) or not text.strip():
        raise BackendBadReply("claude-cli result is empty")
    return text


def claude_cli_backend(model: str, settings: ClaudeCliSettings) -> ClaudeCliBackend:
    command = command_words("KIROCREW_CLAUDE_CLI", settings.KIROCREW_CLAUDE_CLI)
    return ClaudeCliBackend(command, model, timeout=settings.KIROCREW_CLI_TIMEOUT)
