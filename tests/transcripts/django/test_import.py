"""import_transcripts over the original system's sample sessions directory."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.transcripts.django.util import Spy, mirror_diff
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot
from transcripts.services import app_create, session_append_row

pytestmark = pytest.mark.django_db

KEYS = [
    "dashboard:coder-demo",
    "dashboard:research-notes",
    "dashboard:starter",
    "dashboard:triage-demo",
]
SUMMARY = re.compile(
    r"(?:Imported|Would import) (\d+), unchanged (\d+), bad (\d+), conflicts (\d+); "
    r"archives copied (\d+), already present (\d+)"
)

# The sample tree's first import: its four sessions and the one legacy archive.
FIRST_IMPORT = {"imported": 4, "unchanged": 0, "bad": 0, "conflicts": 0, "copied": 1, "present": 0}


def run(*args: str, verbosity: int = 1) -> tuple[str, dict[str, int]]:
    """The command's output and summary counts; a skipped file must exit 1 (the rest imported)."""
    out = StringIO()
    try:
        call_command("import_transcripts", *args, stdout=out, verbosity=verbosity)
        code = 0
    except CommandError as exc:
        code = exc.returncode
        out.write(f"CommandError: {exc}\n")
    text = out.getvalue()
    match = SUMMARY.search(text)
    assert match, text
    names = ("imported", "unchanged", "bad", "conflicts", "copied", "present")
    counts = dict(zip(names, map(int, match.groups()), strict=True))
    assert code == (1 if counts["bad"] or counts["conflicts"] else 0), text
    return text, counts


def test_every_row_arrives(store, fixture_tree):
    _text, counts = run(str(fixture_tree))
    assert counts == FIRST_IMPORT
    source = TranscriptStore(fixture_tree)
    for key in KEYS:
        expected = source.read_session(key)
        assert expected.metadata is not None
        assert store.read_session(key).rows == expected.rows
        session = Session.objects.get(key=key)
        assert session.row_count == len(expected.rows)
        assert session.user_turns == sum(r["role"] == "user" for r in expected.rows)
        assert session.title == expected.metadata["title"]
        assert (session.closed, session.pinned) == (
            expected.metadata["closed"],
            expected.metadata["pinned"],
        )
        assert session.app is None
        assert session.anomaly_counts == {}
        assert Slot.objects.get(session=session).name == key.removeprefix("dashboard:")
        assert mirror_diff(key) == {}
        src, dest = source.path(key), store.path(key)
        assert dest.read_bytes() == src.read_bytes()
        assert dest.stat().st_mtime_ns == src.stat().st_mtime_ns  # the sig survives the copy


def test_the_legacy_archive_chains_into_research_notes(store, fixture_tree):
    run(str(fixture_tree))
    view = store.read_session("dashboard:research-notes")
    assert view.files[0] == "archive/research-notes__20251220-090000.jsonl"
    first_three = [r["content"][:20] for r in view.rows[:3]]
    assert first_three[0].startswith("What was the origina")
    session = Session.objects.get(key="dashboard:research-notes")
    assert session.row_count == 15
    assert session.user_turns == 8
    assert (session.title, session.closed) == ("Research: MCP transport trade-offs", True)


def test_second_run_only_stats(store, fixture_tree, monkeypatch):
    run(str(fixture_tree))
    spy = Spy(monkeypatch, TranscriptStore, "read_session")
    _, again = run(str(fixture_tree))
    assert again == {
        "imported": 0,
        "unchanged": 4,
        "bad": 0,
        "conflicts": 0,
        "copied": 0,
        "present": 1,
    }
    _, in_place = run()  # no PATH: the store's own directory
    assert in_place["unchanged"] == 4
    assert in_place["imported"] == 0
    assert spy.calls == []
    assert Session.objects.count() == 4
    assert Slot.objects.count() == 4


def test_a_changed_file_is_reindexed(store, fixture_tree):
    run(str(fixture_tree))
    with store.path("dashboard:starter").open("ab") as fp:  # another process wrote a row
        fp.write(b'{"role": "user", "content": "more", "ts": "2026-01-16T00:00:00+00:00"}\n')
    text, counts = run(verbosity=2)
    assert (counts["imported"], counts["unchanged"]) == (1, 3)
    assert "imported dashboard:starter" in text
    assert "unchanged" in text
    assert Session.objects.get(key="dashboard:starter").row_count == 5
    session_append_row(key="dashboard:starter", role="assistant", content="ok")
    assert run()[1]["unchanged"] == 4  # a service append leaves the mirror current


def test_bad_files_are_reported_and_skipped(store, fixture_tree):
    (fixture_tree / "empty.jsonl").write_bytes(b"")
    (fixture_tree / "garbage.jsonl").write_bytes(b"not json at all\n\x00\xff\n")
    (fixture_tree / "dangling.jsonl").symlink_to(fixture_tree / "missing-target")
    (fixture_tree / "name with space.jsonl").write_text('{"_type": "metadata"}\n')
    text, counts = run(str(fixture_tree))
    assert counts["imported"] == 4
    assert counts["bad"] == 4
    assert "Bad files (skipped):" in text
    assert "empty.jsonl: empty file" in text
    assert "garbage.jsonl: line 0 is not metadata and no rows" in text
    assert "dangling.jsonl: not a regular file: a symbolic link (never followed)" in text
    assert "name with space.jsonl: the file name is not <safe_key>.jsonl" in text
    assert Session.objects.count() == 4
    assert sorted(p.name for p in store.root.glob("*.jsonl")) == [
        "dashboard_coder-demo.jsonl",
        "dashboard_research-notes.jsonl",
        "dashboard_starter.jsonl",
        "dashboard_triage-demo.jsonl",
    ]  # bad files stay out of the store


def test_anomalies_are_imported_and_counted(store, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "torn.jsonl").write_bytes(
        b'{"_type": "metadata", "title": "T"}\n'
        b'{"role": "user", "content": "a", "ts": "2025-01-01T00:00:02+00:00"}\n'
        b'{"role": "assistant", "content": "b", "ts": "2025-01-01T00:00:01+00:00"}\n'
        b"\n"
        b'{"role": "assistant", "content": "cut'
    )
    text, counts = run(str(src))
    assert counts["imported"] == 1
    session = Session.objects.get(key="torn")
    assert session.anomaly_counts == {"non_monotonic_ts": 1, "blank": 1, "torn_tail": 1}
    assert session.row_count == 2
    assert Slot.objects.get(session=session).name == "torn"
    assert "anomalies:" in text


def test_conflicts_never_overwrite(store, fixture_tree):
    store.path("dashboard:starter").write_bytes(b'{"_type": "metadata", "title": "mine"}\n')
    text, counts = run(str(fixture_tree))
    assert counts["conflicts"] == 1
    assert counts["imported"] == 3
    assert "dashboard_starter.jsonl: a different file of that name is already in the store" in text
    assert store.read_metadata("dashboard:starter") == {"_type": "metadata", "title": "mine"}
    assert not Session.objects.filter(key="dashboard:starter").exists()


def test_app_owns_what_it_imports(store, fixture_tree):
    _app, _ = app_create(name="crew")
    run(str(fixture_tree), "--app", "crew")
    assert set(Session.objects.values_list("app__name", flat=True)) == {"crew"}
    assert set(Slot.objects.values_list("app__name", flat=True)) == {"crew"}
    with pytest.raises(CommandError, match="no app named"):
        call_command("import_transcripts", "--app", "ghost", stdout=StringIO())


def test_app_claims_unscoped_sessions_but_never_another_apps(store, fixture_tree):
    run(str(fixture_tree))
    crew, _ = app_create(name="crew")
    other, _ = app_create(name="other")
    Session.objects.filter(key="dashboard:starter").update(app=other)
    _text, counts = run("--app", "crew")
    assert counts["unchanged"] == 4
    owners = dict(Session.objects.values_list("key", "app__name"))
    assert owners["dashboard:starter"] == "other"
    assert owners["dashboard:coder-demo"] == "crew"
    assert Slot.objects.get(name="coder-demo").app == crew


def test_dry_run_changes_nothing(store, fixture_tree):
    text, counts = run(str(fixture_tree), "--dry-run")
    assert "Dry run, nothing changed. Would import 4" in text
    assert "[1/4] dashboard_coder-demo.jsonl: would import dashboard:coder-demo" in text
    assert counts == FIRST_IMPORT
    assert list(store.root.glob("*.jsonl")) == []
    assert not store.archive_dir.exists()
    assert not Session.objects.exists()


def test_line0_key_and_app_are_honoured(store, tmp_path):
    owner, _ = app_create(name="crew")
    src = tmp_path / "src"
    src.mkdir()
    (src / "dashboard_a_b.jsonl").write_text(
        '{"_type": "metadata", "key": "dashboard:a:b", "app": "crew"}\n'
        '{"role": "user", "content": "x", "ts": "2025-01-01T00:00:00+00:00"}\n'
    )
    run(str(src))
    session = Session.objects.get()
    assert (session.key, session.app, session.slot.name) == ("dashboard:a:b", owner, "a:b")


def test_a_key_without_a_valid_slot_name_is_imported_without_slot(store, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "_hidden.jsonl").write_text('{"_type": "metadata"}\n')
    text, counts = run(str(src))
    assert counts["imported"] == 1
    assert "no slot" in text
    assert Session.objects.filter(key="_hidden").exists()
    assert not Slot.objects.exists()


def test_a_single_file_path_and_bad_paths(store, fixture_tree):
    run(str(fixture_tree / "dashboard_starter.jsonl"))
    assert list(Session.objects.values_list("key", flat=True)) == ["dashboard:starter"]
    with pytest.raises(CommandError):
        call_command("import_transcripts", str(fixture_tree / "nope"), stdout=StringIO())
