"""``codex-cli`` / ``codex-cli:<model>``: the Codex CLI's non-interactive mode, as its
user is logged in.

``codex exec --ephemeral --skip-git-repo-check --sandbox read-only --color never
-o <file> [-m M] -`` reads the prompt from stdin (``-``), streams progress to stderr and
writes the final agent message to ``<file>`` (``--output-last-message``), which is the
reply; ``--ephemeral`` keeps it from writing a rollout file under ~/.codex/sessions
(which ``import_transcripts`` reads). The process rules are ``cli.CliRun``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

from .base import BackendBadReply, BackendRunaway
from .cli import CliBackend, CliRun, command_words
from .http import MAX_REPLY_BYTES

FLAGS: Final = ("exec", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only")
LAST_MESSAGE: Final = "last-message.txt"


class CodexCliSettings(Protocol):
    KIROCREW_CODEX_CLI: str
    KIROCREW_CLI_TIMEOUT: float


class CodexCliBackend(CliBackend):
    KIND = "codex-cli"

    def argv(self, last_message: str) -> list[str]:
        model = ["-m", self.model] if self.model else []
        return [*self.command, *FLAGS, "--color", "never", "-o", last_message, *model, "-"]

    def generate(self, prompt: str, turns: Sequence[Any]) -> str:
        with CliRun(self.name, [], prompt, timeout=self.timeout) as run:
            answer = run.workdir / LAST_MESSAGE
            run.run(self.argv(str(answer)))
            try:
                with answer.open("rb") as f:
                    raw = f.read(MAX_REPLY_BYTES + 1)
            except FileNotFoundError:
                raise BackendBadReply("codex-cli wrote no final message") from None
        if len(raw) > MAX_REPLY_BYTES:
            raise BackendRunaway(f"codex-cli's final message exceeds {MAX_REPLY_BYTES} bytes")
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            raise BackendBadReply("codex-cli's final message is empty")
        return text


def codex_cli_backend(model: str, settings: CodexCliSettings) -> CodexCliBackend:
    command = command_words("KIROCREW_CODEX_CLI", settings.KIROCREW_CODEX_CLI)
    return CodexCliBackend(command, model, timeout=settings.KIROCREW_CLI_TIMEOUT)
