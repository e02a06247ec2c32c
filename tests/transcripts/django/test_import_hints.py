"""An import that finds no session file says where sessions usually are, instead of a bare
"Imported 0" (a newcomer who forgot --format, or pointed at the wrong folder, learned
nothing from it)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.transcripts.agents.helpers import copy_tree
from transcripts.core.store import TranscriptStore

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    err = StringIO()
    call_command("import_transcripts", *args, stdout=StringIO(), stderr=err)
    return err.getvalue()


def test_a_folder_without_sessions_and_without_format_gets_the_format_hint(
    tmp_path: Path, store: TranscriptStore
) -> None:
    (tmp_path / "empty").mkdir()  # (a folder of Claude sessions is converted: no hint)
    assert "add --format claude-code, codex or auto" in run(str(tmp_path / "empty"))


def test_an_agent_import_of_an_empty_folder_says_where_sessions_live(
    tmp_path: Path, store: TranscriptStore
) -> None:
    (tmp_path / "empty").mkdir()
    err = run("--format", "claude-code", str(tmp_path / "empty"))
    assert "~/.claude/projects" in err
    assert "~/.codex/sessions" in err


def test_a_folder_with_sessions_gets_no_hint(tmp_path: Path, store: TranscriptStore) -> None:
    src = copy_tree(tmp_path / "src", "claude")
    assert run("--format", "claude-code", str(src)) == ""
    assert run("--format", "claude-code", str(src)) == ""  # a re-run: unchanged, still found
