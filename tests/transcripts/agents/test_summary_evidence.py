"""The heuristic summarizer reads an imported session's tool results as evidence.

The reply of the fixture's first turn is made neutral ("Done with the change."), so the
only sign of how the test run went is the imported ``tool_result`` row.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from summaries.core.sidecar import sidecar_path
from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, copy_tree
from transcripts.runtime import get_store

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("output", "is_error", "verified", "progress"),
    [
        (".....\n5 passed in 0.12s", False, True, "Verified: Tests passed."),
        ("Exit code 1\n1 failed, 4 passed in 0.3s", True, False, "Last run failed: Tests failed."),
    ],
)
def test_test_run_result_decides_verified(
    tmp_path: Path,
    store,
    enabled_summaries,
    eager_tasks,
    counting_backend,
    django_capture_on_commit_callbacks,
    output: str,
    is_error: bool,
    verified: bool,
    progress: str,
) -> None:
    path = copy_tree(tmp_path / "src") / CLAUDE_FILE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    result = lines[11]["message"]["content"][0]
    result.update(content=output, is_error=is_error)
    lines[12]["message"]["content"][0]["text"] = "Done with the change."
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_transcripts", "--format", "claude-code", str(path), stdout=StringIO())
    sidecar = sidecar_path(get_store().root, f"claude:{CLAUDE_SID}", "intents")
    intent = json.loads(sidecar.read_text())["intents"][0]
    assert intent["verified"] is verified
    assert progress in intent["progress"]
