"""The sidecar layout is summaries' own, and a session delete reaps it through the hook."""

from __future__ import annotations

from pathlib import Path

from summaries.core.sidecar import INTENTS, ONE_LINE, sidecar_path, sidecar_paths
from tests.transcripts.helpers import make_store
from transcripts.core.rewrite import derived_paths


def test_sidecars_sit_in_hidden_folders_named_by_the_safe_key(tmp_path: Path) -> None:
    assert (
        sidecar_path(tmp_path, "dashboard:s1", INTENTS) == tmp_path / ".intents/dashboard_s1.json"
    )
    assert sidecar_path(tmp_path, "dashboard:s1", ONE_LINE) == (
        tmp_path / ".summaries/dashboard_s1.json"
    )


def test_the_app_registers_its_sidecars_as_derived_files(tmp_path: Path) -> None:
    # SummariesConfig.ready() ran (pytest-django set the apps up).
    assert set(sidecar_paths(tmp_path, "k")) <= set(derived_paths(tmp_path, "k"))


def test_a_session_delete_reaps_both_sidecars(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row("dashboard:s1", "user", "hello")
    for path in sidecar_paths(tmp_path, "dashboard:s1"):
        path.parent.mkdir(exist_ok=True)
        path.write_text("{}")
    assert store.delete("dashboard:s1") is True
    assert not any(path.exists() for path in sidecar_paths(tmp_path, "dashboard:s1"))
