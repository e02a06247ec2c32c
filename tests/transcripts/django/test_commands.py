"""rotate_transcripts, cleanup_archives and create_app."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.transcripts.django.util import mirror_diff
from transcripts.models import App, Session
from transcripts.services import app_authenticate, session_append_row, session_create

pytestmark = pytest.mark.django_db


def command(name: str, *args: str, verbosity: int = 1) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, verbosity=verbosity)
    return out.getvalue()


@pytest.fixture
def long_session(store, settings):
    settings.TRANSCRIPT_MAX_BYTES = 10_000_000
    settings.TRANSCRIPT_KEEP_LINES = 3
    session_create(name="long", app=None)
    session_create(name="short", app=None)
    for i in range(10):
        session_append_row(key="dashboard:long", role="user", content=f"row {i} " + "x" * 50)
    session_append_row(key="dashboard:short", role="user", content="one")
    settings.TRANSCRIPT_MAX_BYTES = 600  # now only "long" is over the limit
    return store


def test_rotate_over_the_limits(long_session):
    text = command("rotate_transcripts")
    assert "dashboard:long: dropped 7 rows" in text
    assert "dashboard:short" not in text
    assert "Rotated 1 transcript, 7 rows archived" in text  # one transcript: singular
    session = Session.objects.get(key="dashboard:long")
    assert session.gen == 1
    assert session.row_count == 10
    assert mirror_diff("dashboard:long") == {}
    assert "Nothing over the limits." in command("rotate_transcripts")


def test_rotate_named_and_forced(long_session):
    text = command("rotate_transcripts", "--force", "short")  # a slot name works too
    assert "dashboard:short: dropped 0 rows" in text
    assert Session.objects.get(key="dashboard:short").gen == 1
    assert mirror_diff("dashboard:short") == {}
    with pytest.raises(CommandError, match="no transcript or slot"):
        command("rotate_transcripts", "ghost")


def test_cleanup_archives_by_header_time(store, fixture_tree):
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())
    archive = store.archive_dir / "research-notes__20251220-090000.jsonl"
    text = command("cleanup_archives", "--days", "100000", verbosity=2)
    assert (
        "kept archive/research-notes__20251220-090000.jsonl (archived_at 2025-12-20T09:00" in text
    )
    assert "Deleted 0 of 1 archive (retention 100000 days)" in text
    text = command("cleanup_archives", "--dry-run")
    assert (
        "would delete archive/research-notes__20251220-090000.jsonl (archived_at 2025-12-20T09:00:00+00:00)"
        in text
    )
    assert "Would delete 1 of 1 archive (retention 30 days)" in text
    assert archive.exists()
    assert Session.objects.get(key="dashboard:research-notes").row_count == 15
    text = command("cleanup_archives")
    assert "deleted archive/research-notes__20251220-090000.jsonl" in text
    assert not archive.exists()
    assert Session.objects.get(key="dashboard:research-notes").row_count == 12
    assert mirror_diff("dashboard:research-notes") == {}


def test_cleanup_retention_from_settings_and_disabled(store, fixture_tree, settings):
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())
    settings.KIROCREW_ARCHIVE_RETENTION_DAYS = 100000
    assert "Deleted 0 of 1 archive (retention 100000 days)" in command("cleanup_archives")
    assert "disabled" in command("cleanup_archives", "--days", "-1")
    assert (store.archive_dir / "research-notes__20251220-090000.jsonl").exists()


def test_create_app_prints_the_token_once(db):
    text = command("create_app", "ci")
    lines = text.strip().splitlines()
    token = lines[-1]
    assert token.startswith("kc_")
    assert " " not in token
    assert text.count(token) == 1
    assert app_authenticate(token=token) == App.objects.get(name="ci")
    with pytest.raises(CommandError, match="already exists"):
        command("create_app", "ci")
    with pytest.raises(CommandError):
        command("create_app", " ")
