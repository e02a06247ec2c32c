"""Issue 14 item 3: the mirror takes a session's source and project from line 0 and keeps
them through appends, line-0 edits and re-syncs; migration 0005 fills existing rows."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.fixtures.personas import superuser_client
from transcripts.core.store import TranscriptStore
from transcripts.models import App, Session
from transcripts.services import (
    session_append_row,
    session_create,
    session_index,
    session_set_title,
    session_sync,
    session_verify,
    session_verify_all,
)

BEFORE = [("transcripts", "0004_session_list_keyset_idx")]
AFTER = [("transcripts", "0005_session_source_project")]


def test_sync_fills_source_and_project_and_a_resync_keeps_them(
    store: TranscriptStore, db: None
) -> None:
    key = "claude:5f0c"
    store.create(key, {"key": key, "source": "claude-code", "cwd": "/home/ann/src/dateparse"})
    session, _ = session_index(key=key)
    assert (session.source, session.project) == ("claude-code", "/home/ann/src/dateparse")

    session_append_row(key=key, role="user", content="more")  # the cheap append path
    session_set_title(key=key, title="renamed")  # a line-0 edit
    session_sync(key=key, force=True)  # the full fold
    again = Session.objects.get(key=key)
    assert (again.source, again.project, again.row_count) == (
        "claude-code",
        "/home/ann/src/dateparse",
        1,
    )


def test_codex_original_and_api_files(store: TranscriptStore, alice: App) -> None:
    store.create("codex:019a", {"key": "codex:019a", "source": "codex", "cwd": "/w/tinycli"})
    # The original system's line 0 (written as it wrote it: no key, no source); its project
    # key names the path, with a NUL no database text column can hold.
    store.path("dashboard:old").write_text(
        '{"_type": "metadata", "created_at": "2026-01-01T00:00:00+00:00", '
        '"last_consolidated": 0, "project": "/srv/legacy\\u0000"}\n'
    )
    store.create("dashboard:bare")
    slot = session_create(name="fresh", app=alice)
    got = {
        key: (s.source, s.project)
        for key in ("codex:019a", "dashboard:old", "dashboard:bare")
        for s in [session_index(key=key)[0]]
    }
    assert got == {
        "codex:019a": ("codex", "/w/tinycli"),
        "dashboard:old": ("kirocrew", "/srv/legacy"),
        "dashboard:bare": ("kirocrew", ""),
    }
    assert (slot.session.source, slot.session.project) == ("api", "")


def test_an_unknown_source_in_line_0_is_not_taken(store: TranscriptStore, db: None) -> None:
    store.create("dashboard:odd", {"key": "dashboard:odd", "source": "cli", "cwd": 42})
    session, _ = session_index(key="dashboard:odd")
    assert (session.source, session.project) == ("api", "")


@pytest.mark.django_db(transaction=True)
def test_migration_fills_existing_rows_by_key_prefix() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_apps = executor.loader.project_state(BEFORE).apps
    old_app = old_apps.get_model("transcripts", "App").objects.create(
        name="owner", token_hash="h" * 64, token_prefix="kc_h"
    )
    old = old_apps.get_model("transcripts", "Session")
    rows: dict[str, Any] = {
        "claude:a": None,
        "claude:a:agent-1": None,
        "codex:b": None,
        "dashboard:api": old_app,
        "dashboard:orig": None,
    }
    for key, app in rows.items():
        old.objects.create(key=key, safe_key=key.replace(":", "_"), app=app)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("transcripts", "Session")
    assert dict(new.objects.values_list("key", "source")) == {
        "claude:a": "claude-code",
        "claude:a:agent-1": "claude-code",
        "codex:b": "codex",
        "dashboard:api": "api",
        "dashboard:orig": "kirocrew",
    }
    assert set(new.objects.values_list("project", flat=True)) == {""}

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest for the rest


def test_verify_repairs_a_source_the_migration_guessed(store: TranscriptStore, db: None) -> None:
    key = "dashboard:legacy"
    store.create(key, {"key": key, "cwd": "/srv/app"})  # made by this system: api
    session_index(key=key)
    Session.objects.filter(key=key).update(source="kirocrew", project="")  # 0005's guess
    found = session_verify(key=key, session=Session.objects.get(key=key))
    assert [f.kind for f in found] == ["drift"]
    assert "source mirror='kirocrew' disk='api'" in found[0].detail
    result = session_verify_all(repair=True)
    assert not result.problems
    assert Session.objects.filter(key=key, source="api", project="/srv/app").exists()


def test_the_admin_filters_sessions_by_source(store: TranscriptStore, db: None) -> None:
    store.create("codex:c1", {"key": "codex:c1", "source": "codex", "cwd": "/w/a"})
    store.create("claude:k1", {"key": "claude:k1", "source": "claude-code", "cwd": "/w/b"})
    for key in ("codex:c1", "claude:k1"):
        session_index(key=key)
    body = superuser_client().get("/admin/transcripts/session/", {"source": "codex"})
    assert body.status_code == 200
    text = body.content.decode()
    assert "codex:c1" in text
    assert "claude:k1" not in text
