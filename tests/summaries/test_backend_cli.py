"""The agent-CLI backends against fake ``claude`` / ``codex`` executables on PATH (real
processes that speak the documented output, hang, fail or flood): the prompt travels on
stdin, a timeout kills the process group, stderr reaches the log bounded and redacted,
and the CLI sees none of kirocrew's settings."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from summaries.core.backends import (
    BackendBadReply,
    BackendRunaway,
    BackendTimeout,
    BackendUnavailable,
    resolve_backend,
)
from summaries.core.backends.cli import STDERR_EXCERPT_CHARS, ClaudeCliBackend, CodexCliBackend
from tests.summaries.fake_cli_fixture import FakeCli

PROMPT = "Summarize by INTENT. TRANSCRIPT\n\n[1] user: please fix the flaky login test"
REPLY = '{"intents": [{"title": "Fix the flaky login test"}]}'


def claude(timeout: float = 20.0, model: str = "") -> ClaudeCliBackend:
    return ClaudeCliBackend(["claude"], model, timeout=timeout)


def codex(timeout: float = 20.0, model: str = "") -> CodexCliBackend:
    return CodexCliBackend(["codex"], model, timeout=timeout)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_claude_gets_the_prompt_on_stdin_in_print_mode_and_answers_with_the_result(
    fake_cli: FakeCli,
) -> None:
    fake_cli.mode("reply", REPLY)

    assert claude(model="sonnet").generate(PROMPT, []) == REPLY

    argv = fake_cli.recorded_json("argv.json")
    assert argv[1:] == [
        "-p",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--model",
        "sonnet",
    ]
    assert fake_cli.recorded("stdin.txt") == PROMPT
    assert not any("flaky" in word for word in argv)  # never on the command line (ps)


def test_codex_gets_the_prompt_on_stdin_and_its_last_message_is_the_reply(
    fake_cli: FakeCli,
) -> None:
    fake_cli.mode("reply", REPLY)

    assert codex(model="gpt-5").generate(PROMPT, []) == REPLY

    argv = fake_cli.recorded_json("argv.json")
    assert argv[1:4] == ["exec", "--ephemeral", "--skip-git-repo-check"]
    assert argv[argv.index("-m") + 1] == "gpt-5"
    assert argv[-1] == "-"  # the prompt from stdin
    assert fake_cli.recorded("stdin.txt") == PROMPT


@pytest.mark.parametrize("make", [claude, codex], ids=["claude", "codex"])
def test_the_cli_runs_in_a_private_folder_without_our_settings(
    fake_cli: FakeCli, monkeypatch: pytest.MonkeyPatch, make
) -> None:
    monkeypatch.setenv("KIROCREW_OPENAI_API_KEY", "sk-proj-ourKEYmustNotLeak0123456789")
    monkeypatch.setenv("DJANGO_SECRET_KEY", "django-secret")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@h/db")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    fake_cli.mode("reply", REPLY)

    make().generate(PROMPT, [])

    env = fake_cli.recorded_json("env.json")
    assert not [name for name in env if name.startswith(("KIROCREW_", "DJANGO_"))]
    assert "DATABASE_URL" not in env
    assert "HTTPS_PROXY" not in env
    assert env["HOME"] == str(fake_cli.home)  # what it needs to find its login stays
    workdir = Path(fake_cli.recorded("cwd.txt"))
    assert workdir.name.startswith("kirocrew-summary-")
    assert not workdir.exists()  # removed after the call


@pytest.mark.parametrize("make", [claude, codex], ids=["claude", "codex"])
def test_a_hanging_cli_is_killed_with_its_whole_process_group(fake_cli: FakeCli, make) -> None:
    fake_cli.mode("hang_with_child")

    with pytest.raises(BackendTimeout) as info:
        make(timeout=1.0).generate(PROMPT, [])

    assert "process group" in str(info.value)
    for name in ("pid", "child_pid"):
        pid = int(fake_cli.recorded(name))
        for _ in range(500):  # a bound for a broken test, not a measurement
            if not alive(pid):
                break
            os.sched_yield()
            __import__("time").sleep(0.01)
        assert not alive(pid), name


@pytest.mark.parametrize("make", [claude, codex], ids=["claude", "codex"])
def test_a_failing_cli_logs_a_bounded_redacted_stderr_tail(
    fake_cli: FakeCli, make, caplog: pytest.LogCaptureFixture
) -> None:
    fake_cli.mode("fail")

    with (
        caplog.at_level(logging.WARNING, logger="summaries.core.backends.cli"),
        pytest.raises(BackendUnavailable) as info,
    ):
        make().generate(PROMPT, [])

    assert "exited with status 2" in str(info.value)
    assert "not logged in" not in str(info.value)  # stderr never in the message
    [record] = caplog.records
    logged = record.getMessage()
    assert "the last line" in logged
    assert len(logged) < STDERR_EXCERPT_CHARS + 200
    assert "not logged in" in logged  # the reason, from the tail
    assert "Q" * 20 not in caplog.text  # the secret beside it, redacted


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("garbage", BackendBadReply),
        ("huge", BackendRunaway),
        ("error_result", BackendBadReply),
    ],
)
def test_claude_bad_output_is_a_typed_error(fake_cli: FakeCli, mode: str, error) -> None:
    fake_cli.mode(mode)
    with pytest.raises(error):
        claude().generate(PROMPT, [])


def test_a_flood_on_stderr_does_not_block_the_reply(fake_cli: FakeCli) -> None:
    fake_cli.mode("stderr_flood", REPLY)
    assert claude().generate(PROMPT, []) == REPLY


def test_a_cli_that_is_not_installed_is_unavailable(tmp_path: Path) -> None:
    missing = ClaudeCliBackend([str(tmp_path / "no-such-claude")], timeout=5)
    with pytest.raises(BackendUnavailable, match="cannot run"):
        missing.generate(PROMPT, [])


class _Settings:
    KIROCREW_CLAUDE_CLI = "claude"
    KIROCREW_CODEX_CLI = "/opt/codex/bin/codex --profile work"
    KIROCREW_CLI_TIMEOUT = 300.0


def test_the_registry_builds_the_cli_backends() -> None:
    plain = resolve_backend("claude-cli", _Settings())
    named = resolve_backend("claude-cli:opus", _Settings())
    assert (plain.name, named.name) == ("claude-cli", "claude-cli:opus")
    built = resolve_backend("codex-cli", _Settings())
    assert isinstance(built, CodexCliBackend)
    assert built.command == ["/opt/codex/bin/codex", "--profile", "work"]
