"""A new user's first import of their own agent sessions, run as the README says
(``manage.py import_transcripts PATH`` in a real process) on files in the agents' own
layouts: a folder of another agent's sessions is converted without ``--format``, and a
file that yields no turn in the format asked for is reported, never stored as junk."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.dashboard.test_first_run_processes import manage
from tests.transcripts.agents.helpers import CLAUDE_PROJECT, CLAUDE_SID, CODEX_FILE, copy_tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("migrated") / "home"
    home.mkdir()
    done = manage(home, "migrate", "--noinput", "-v", "0")
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture
def home(migrated: Path, tmp_path: Path) -> Path:
    fresh = tmp_path / "home"
    shutil.copytree(migrated, fresh)
    return fresh


def sessions(home: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(home / "kirocrew.sqlite3") as db:
        rows = db.execute(
            "SELECT key, title, user_turns FROM transcripts_session ORDER BY key"
        ).fetchall()
    return [(str(k), str(t), int(n)) for k, t, n in rows]


def stored_files(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "sessions").glob("*.jsonl"))


def test_a_claude_project_folder_without_format_is_converted_not_copied(
    home: Path, tmp_path: Path
) -> None:
    project = copy_tree(tmp_path / "src", CLAUDE_PROJECT)  # ~/.claude/projects/-home-…/

    done = manage(home, "import_transcripts", str(project))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "converting them (--format auto)" in done.stdout
    by_key = {key: (title, turns) for key, title, turns in sessions(home)}
    assert by_key[f"claude:{CLAUDE_SID}"] == ("Fix ISO week date parsing", 3)
    assert CLAUDE_SID not in by_key  # no session titled by the file's UUID
    assert f"{CLAUDE_SID}.jsonl" not in stored_files(home)  # the source was not copied


def test_an_explicit_kirocrew_import_of_agent_sessions_is_refused_with_the_format_to_use(
    home: Path, tmp_path: Path
) -> None:
    project = copy_tree(tmp_path / "src", CLAUDE_PROJECT)

    done = manage(home, "import_transcripts", "--format", "kirocrew", str(project))

    assert done.returncode == 1
    assert "looks like claude-code, not a Kiro Crew transcript (use --format claude-code" in (
        done.stdout
    )
    assert sessions(home) == []
    assert stored_files(home) == []


def test_a_file_with_no_turn_in_the_format_asked_for_is_reported_and_not_stored(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    # A Codex rollout behind lines detection cannot place: read as Claude Code it is all
    # unknown records; the report names the format that does read it.
    codex = (copy_tree(tmp_path / "src") / CODEX_FILE).read_text()
    unplaced = "".join(json.dumps({"record_type": "state", "n": n}) + "\n" for n in range(25))
    (folder / "rollout-hidden.jsonl").write_text(unplaced + codex)
    for n in range(7):  # eight new files: the bulk first import's path too
        (folder / f"notes-{n}.jsonl").write_text('{"note": "not a session"}\n{"type": "x"}\n')

    done = manage(home, "import_transcripts", "--format", "claude-code", str(folder))

    assert done.returncode == 1
    lines = {line.split(": ", 1)[0]: line for line in done.stdout.splitlines()}
    hidden = lines[str(folder / "rollout-hidden.jsonl")]
    assert "no Claude Code turn in it; not stored (use --format codex)" in hidden
    notes = lines[str(folder / "notes-0.jsonl")]
    assert "no --format fits: it is not a Claude Code or Codex CLI session" in notes
    assert sessions(home) == []
    assert stored_files(home) == []


def test_a_claude_session_with_only_bookkeeping_so_far_waits_unstored(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    snapshot = {
        "type": "file-history-snapshot",
        "messageId": "m1",
        "snapshot": {"trackedFileBackups": {}},
    }
    (project / "0b6f.jsonl").write_text(json.dumps(snapshot) + "\n")

    done = manage(home, "import_transcripts", "-v", "2", str(project))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "no conversation in it yet" in done.stdout
    assert sessions(home) == []
