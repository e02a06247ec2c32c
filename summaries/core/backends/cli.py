"""An agent CLI the person is logged in to as a summarizer: ``claude-cli[:model]`` (Claude
Code's print mode) and ``codex-cli[:model]`` (``codex exec``), one process per pass. The
prompt goes on stdin (``ps`` shows a command line to every user). It runs in a fresh
private folder and its own process group, without kirocrew's settings, secrets and proxy
variables; stdout is capped; only a redacted stderr tail reaches the log. Each CLI's
no-persistence flag keeps a pass from leaving a session for ``import_transcripts``.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import IO, Any, ClassVar, Final, Protocol

from transcripts.core.redaction import redact_text

from .base import BackendBadReply, BackendRunaway, BackendTimeout, BackendUnavailable
from .http import MAX_REPLY_BYTES, check_timeout, reply_json

log = logging.getLogger(__name__)

STDERR_EXCERPT_CHARS: Final = 1000  # stderr's tail that reaches the log (the error is at the end)
_STDERR_KEEP: Final = 64 * 1024  # how much of stderr is kept in memory at all while the CLI runs
#: Environment variables a CLI never sees: ours, and ones that would reroute its traffic.
_PRIVATE_PREFIXES: Final = ("KIROCREW_", "DJANGO_", "CELERY_")
_PROXIES: Final = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
_PRIVATE_NAMES: Final = frozenset(
    {"DATABASE_URL", "REDIS_URL", *_PROXIES, *(name.lower() for name in _PROXIES)}
)
_DRAIN_GRACE: Final = 5.0  # reading what a killed process group left in its pipes takes no longer


def command_words(setting: str, value: str) -> list[str]:
    """A CLI setting as argv words, split like a shell would, never run through one."""
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise ValueError(f"{setting} is not a valid command line ({exc})") from None
    if not words:
        raise ValueError(f"{setting} is empty; name the CLI, e.g. 'claude'")
    return words


def stderr_excerpt(raw: bytes) -> str:
    """The tail of stderr, redacted before the final cut, printable on one log line."""
    text = raw[-4 * STDERR_EXCERPT_CHARS :].decode("utf-8", errors="replace")
    text = redact_text(text)[0][-STDERR_EXCERPT_CHARS:]
    return "".join(c if c.isprintable() else " " for c in text).strip()


def _drain(stream: IO[bytes], keep: int, out: list[bytes], tail: bool) -> None:
    """Read ``stream`` to its end keeping at most ``keep + 1`` bytes (head or tail): a
    flood neither blocks the CLI on a full pipe nor fills our memory."""
    kept = b""
    with suppress(OSError, ValueError):
        while chunk := stream.read(65536):
            kept = (kept + chunk)[-(keep + 1) :] if tail else (kept + chunk)[: keep + 1]
    out.append(kept)


def _feed(stream: IO[bytes], data: bytes) -> None:
    with suppress(OSError, ValueError):  # a CLI that exits without reading: fine
        stream.write(data)
    with suppress(OSError, ValueError):
        stream.close()


def run_cli(name: str, argv: Sequence[str], prompt: str, *, timeout: float, cwd: Path) -> bytes:
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={
                name: value
                for name, value in os.environ.items()
                if name not in _PRIVATE_NAMES and not name.startswith(_PRIVATE_PREFIXES)
            },
            start_new_session=True,  # its own process group: a timeout kills all of it
            close_fds=True,
        )
    except OSError as exc:
        # Not installed, not executable: errno and the program name only.
        raise BackendUnavailable(
            f"{name}: cannot run {argv[0]!r} ({exc.strerror or type(exc).__name__})"
        ) from None
    if proc.stdin is None or proc.stdout is None or proc.stderr is None:
        raise RuntimeError("Popen without the pipes it was asked for")
    out: list[bytes] = []
    err: list[bytes] = []
    threads = [
        threading.Thread(target=_feed, args=(proc.stdin, prompt.encode()), daemon=True),
        threading.Thread(
            target=_drain, args=(proc.stdout, MAX_REPLY_BYTES, out, False), daemon=True
        ),
        threading.Thread(target=_drain, args=(proc.stderr, _STDERR_KEEP, err, True), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        proc.wait(timeout=timeout)
        failure = f"exited with status {proc.returncode}" if proc.returncode else ""
    except subprocess.TimeoutExpired:
        failure = "timed out"
    # Helpers it left running would hold the pipes open: they end with it.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for thread in threads:
        thread.join(_DRAIN_GRACE)
    if failure:
        excerpt = stderr_excerpt(err[0] if err else b"")
        log.warning("summary backend %s %s; stderr tail: %s", name, failure, excerpt or "(empty)")
        if failure == "timed out":
            raise BackendTimeout(
                f"{name} did not answer within {timeout:g} s; its process group was killed"
            )
        raise BackendUnavailable(f"{name} {failure} (its stderr is in the log)")
    stdout = out[0] if out else b""
    if len(stdout) > MAX_REPLY_BYTES:
        raise BackendRunaway(f"{name} wrote more than {MAX_REPLY_BYTES} bytes")
    return stdout


class CliBackend:
    """Each call runs in a fresh private folder, removed afterwards."""

    KIND: ClassVar[str]  # the spec's prefix: "claude-cli", "codex-cli"

    def __init__(self, command: Sequence[str], model: str = "", *, timeout: float) -> None:
        self.command = list(command)
        self.model = model.strip()
        self.timeout = check_timeout(timeout)
        self.name = f"{self.KIND}:{self.model}" if self.model else self.KIND

    def __repr__(self) -> str:
        return f"{type(self).__name__}(command={self.command!r}, model={self.model!r})"

    def _workdir(self) -> tempfile.TemporaryDirectory[str]:
        return tempfile.TemporaryDirectory(prefix="kirocrew-summary-")


class CliSettings(Protocol):
    KIROCREW_CLAUDE_CLI: str
    KIROCREW_CODEX_CLI: str
    KIROCREW_CLI_TIMEOUT: float


#: Print mode, one JSON result object, and no session file left in ~/.claude/projects
#: (which ``import_transcripts`` reads).
CLAUDE_FLAGS: Final = ("-p", "--output-format", "json", "--no-session-persistence")


class ClaudeCliBackend(CliBackend):
    """The answer is ``{"type": "result", "subtype": "success", "is_error": false,
    "result": "<reply>", ...}``; another subtype (``error_max_turns``) or ``is_error`` fails."""

    KIND = "claude-cli"

    def argv(self) -> list[str]:
        model = ["--model", self.model] if self.model else []
        return [*self.command, *CLAUDE_FLAGS, *model]

    def generate(self, prompt: str, turns: Sequence[Any]) -> str:
        with self._workdir() as cwd:
            stdout = run_cli(self.name, self.argv(), prompt, timeout=self.timeout, cwd=Path(cwd))
        payload = reply_json(stdout, "claude-cli output")
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


#: ``--ephemeral``: no rollout file under ~/.codex/sessions (which ``import_transcripts``
#: reads).
CODEX_FLAGS: Final = ("exec", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only")
LAST_MESSAGE: Final = "last-message.txt"


class CodexCliBackend(CliBackend):
    """Progress goes to stderr; the final agent message, the reply, to ``-o <file>``."""

    KIND = "codex-cli"

    def argv(self, last_message: str) -> list[str]:
        model = ["-m", self.model] if self.model else []
        return [*self.command, *CODEX_FLAGS, "--color", "never", "-o", last_message, *model, "-"]

    def generate(self, prompt: str, turns: Sequence[Any]) -> str:
        with self._workdir() as cwd:
            answer = Path(cwd) / LAST_MESSAGE
            run_cli(self.name, self.argv(str(answer)), prompt, timeout=self.timeout, cwd=Path(cwd))
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


def claude_cli_backend(model: str, settings: CliSettings) -> ClaudeCliBackend:
    command = command_words("KIROCREW_CLAUDE_CLI", settings.KIROCREW_CLAUDE_CLI)
    return ClaudeCliBackend(command, model, timeout=settings.KIROCREW_CLI_TIMEOUT)


def codex_cli_backend(model: str, settings: CliSettings) -> CodexCliBackend:
    command = command_words("KIROCREW_CODEX_CLI", settings.KIROCREW_CODEX_CLI)
    return CodexCliBackend(command, model, timeout=settings.KIROCREW_CLI_TIMEOUT)
