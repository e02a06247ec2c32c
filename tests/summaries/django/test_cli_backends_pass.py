"""The agent-CLI backends through the real pass: a summary is stored from the fake CLI's
answer, and the run leaves no session of its own where ``import_transcripts`` looks
(~/.claude/projects, ~/.codex/sessions) for the next import to pick up and summarize."""

from __future__ import annotations

import contextlib
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from summaries.services import PassOutcome, PassResult, summary_generate
from tests.summaries.django.conftest import VALID_REPLY
from tests.summaries.fake_cli_fixture import FakeCli
from transcripts.models import Session

pytestmark = pytest.mark.django_db

FOLDERS = {"claude": (".claude", "projects"), "codex": (".codex", "sessions")}
FORMATS = {"claude": "claude-code", "codex": "codex"}


def import_agent_sessions(fake_cli: FakeCli, agent: str) -> None:
    folder = fake_cli.home.joinpath(*FOLDERS[agent])
    folder.mkdir(parents=True, exist_ok=True)  # the real CLI's folder exists
    with contextlib.suppress(SystemExit):
        call_command(
            "import_transcripts",
            "--format",
            FORMATS[agent],
            str(folder),
            stdout=StringIO(),
            stderr=StringIO(),
        )


def files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_cli_summary_leaves_no_session_for_the_importer(
    enabled_summaries, make_slot, settings, fake_cli: FakeCli, agent: str
) -> None:
    settings.KIROCREW_SUMMARY_MODEL = f"{agent}-cli"
    fake_cli.mode("reply", VALID_REPLY)
    fake_cli.persists_like(agent)  # a session file, unless told not to persist
    make_slot(turns=2)
    before = set(Session.objects.values_list("key", flat=True))

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.STORED)
    import_agent_sessions(fake_cli, agent)

    assert files_under(fake_cli.home.joinpath(*FOLDERS[agent])) == []
    assert set(Session.objects.values_list("key", flat=True)) == before


def test_the_fake_cli_does_persist_without_the_option(fake_cli: FakeCli, make_slot) -> None:
    """The check above can fail: run as a person would (no option), the fake writes a
    session the importer picks up."""
    import subprocess

    fake_cli.persists_like("claude")
    fake_cli.mode("reply", "hi")
    subprocess.run(
        ["claude", "-p", "--output-format", "json"], input=b"hi", check=True, capture_output=True
    )
    before = Session.objects.count()
    import_agent_sessions(fake_cli, "claude")
    assert Session.objects.count() == before + 1


@pytest.mark.parametrize(
    ("mode", "detail"),
    [("hang", "BackendTimeout"), ("fail", "BackendUnavailable"), ("garbage", "BackendBadReply")],
)
def test_a_cli_failure_keeps_the_pass_contained(
    enabled_summaries, make_slot, settings, fake_cli: FakeCli, mode: str, detail: str
) -> None:
    settings.KIROCREW_SUMMARY_MODEL = "claude-cli"
    settings.KIROCREW_CLI_TIMEOUT = 1.0
    fake_cli.mode(mode)
    make_slot(turns=2)
    outcome = summary_generate(slot_name="s1", force=True)
    assert outcome == PassOutcome(PassResult.BACKEND_ERROR, detail)
