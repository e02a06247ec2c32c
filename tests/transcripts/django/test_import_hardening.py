"""import_transcripts as an attack vector: links, sparse files, foreign archives, NUL.

Real files in ``tmp_path``: symbolic links to an outside transcript and to ``/etc/passwd``
and ``/etc/shadow``, a 2 GiB sparse file, archives aimed at another owner's session, and
line 0 fields holding NUL characters.
"""

from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.transcripts.django.test_import import KEYS, run
from tests.transcripts.django.util import mirror_diff, verify
from transcripts.core.store import TranscriptStore
from transcripts.models import Session
from transcripts.runtime import get_store
from transcripts.services import session_append_row, session_create, session_verify

pytestmark = pytest.mark.django_db

LINK_REASON = "not a regular file: a symbolic link (never followed)"
GIB2 = 2 * 1024**3


def store_bytes(store: TranscriptStore) -> bytes:
    """Every byte of every regular file under the store (links are not followed)."""
    return b"".join(
        p.read_bytes() for p in sorted(store.root.rglob("*")) if p.is_file() and not p.is_symlink()
    )


def store_blocks(store: TranscriptStore) -> int:
    """Disk usage of the store in bytes (allocated blocks, not apparent sizes)."""
    return sum(os.lstat(p).st_blocks * 512 for p in store.root.rglob("*"))


def transcript(path: Path, title: str, *contents: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"_type": "metadata", "title": title}] + [
        {"role": "user", "content": c, "ts": f"2025-01-01T00:00:0{i}+00:00"}
        for i, c in enumerate(contents)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def archive(path: Path, *contents: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"_type": "archive", "reason": "rotate", "archived_at": "2020-01-01T00:00:00"}
    rows = [
        {"role": "user", "content": c, "ts": f"2020-01-01T00:00:0{i}+00:00"}
        for i, c in enumerate(contents)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *rows]))
    return path


def test_symbolic_links_are_never_followed(store, fixture_tree, tmp_path):
    outside = transcript(tmp_path / "outside" / "real.jsonl", "Outside", "OUTSIDE SECRET")
    (fixture_tree / "dashboard_secret.jsonl").symlink_to(outside)
    (fixture_tree / "passwd.jsonl").symlink_to("/etc/passwd")
    (fixture_tree / "shadow.jsonl").symlink_to("/etc/shadow")
    # An archive link, next to a session file this run brings (so only the link stops it).
    (fixture_tree / "archive" / "dashboard_starter__20200101-000000.jsonl").symlink_to(outside)

    text, counts = run(str(fixture_tree))

    assert (counts["imported"], counts["bad"]) == (4, 4)
    for name in ("dashboard_secret.jsonl", "passwd.jsonl", "shadow.jsonl"):
        assert f"  {name}: {LINK_REASON}" in text
    assert f"  archive/dashboard_starter__20200101-000000.jsonl: {LINK_REASON}" in text
    assert sorted(Session.objects.values_list("key", flat=True)) == KEYS
    names = sorted(p.name for p in store.root.rglob("*.jsonl"))
    assert names == sorted(
        [f"{k.replace(':', '_')}.jsonl" for k in KEYS] + ["research-notes__20251220-090000.jsonl"]
    )
    everything = store_bytes(store)
    assert b"OUTSIDE SECRET" not in everything
    passwd_line = Path("/etc/passwd").read_bytes().splitlines()[0]
    assert passwd_line not in everything
    assert not any(passwd_line.decode() in s.title for s in Session.objects.all())
    assert b"OUTSIDE" not in json.dumps(store.read_session("dashboard:starter").rows).encode()


def test_a_linked_archive_directory_is_not_followed(store, tmp_path):
    outside = tmp_path / "elsewhere"
    archive(outside / "fresh__20200101-000000.jsonl", "FROM A LINKED DIRECTORY")
    src = tmp_path / "src"
    transcript(src / "dashboard_fresh.jsonl", "Fresh", "own row")
    (src / "archive").symlink_to(outside)

    text, counts = run(str(src))

    assert (counts["imported"], counts["bad"], counts["copied"]) == (1, 1, 0)
    assert "  archive: not a directory: a symbolic link (never followed)" in text
    assert [r["content"] for r in store.read_session("dashboard:fresh").rows] == ["own row"]
    assert not store.archive_dir.exists()


def test_a_sparse_file_over_the_limit_is_skipped_unread(store, tmp_path):
    src = tmp_path / "src"
    big = transcript(src / "dashboard_big.jsonl", "Big", "the start of a huge file")
    os.truncate(big, GIB2)  # apparent size 2 GiB, a few KiB on disk
    assert big.stat().st_size == GIB2
    assert big.stat().st_blocks * 512 < 1024 * 1024, "the file system made it dense"
    transcript(src / "dashboard_small.jsonl", "Small", "fine")
    store.root.mkdir(parents=True, exist_ok=True)
    before = store_blocks(store)

    text, counts = run(str(src))

    assert (counts["imported"], counts["bad"]) == (1, 1)
    assert (
        f"  dashboard_big.jsonl: too large: {GIB2} bytes, the limit is {512 * 1024 * 1024} "
        "(KIROCREW_IMPORT_MAX_BYTES)" in text
    )
    assert not store.path("dashboard:big").exists()
    assert not Session.objects.filter(key="dashboard:big").exists()
    assert max(p.stat().st_size for p in store.root.rglob("*") if p.is_file()) < 64 * 1024
    assert store_blocks(store) - before < 64 * 1024  # only the small file arrived
    _, dry = run(str(src), "--dry-run")  # a dry run judges it the same way
    assert (dry["bad"], dry["imported"]) == (1, 0)


def test_the_limit_is_a_setting_and_holds_in_place_too(store, fixture_tree, settings):
    settings.KIROCREW_IMPORT_MAX_BYTES = 2000
    text, counts = run(str(fixture_tree))
    sizes = {
        str(p.relative_to(fixture_tree)): p.stat().st_size for p in fixture_tree.rglob("*.jsonl")
    }
    over = sorted(name for name, size in sizes.items() if size > 2000)
    assert "dashboard_research-notes.jsonl" in over, sizes
    for name in over:
        assert f"  {name}: too large: {sizes[name]} bytes, the limit is 2000" in text
        assert not (store.root / name).exists()
    # Its session stayed out, so its archive (small enough) has no new session to join.
    orphan = "archive/research-notes__20251220-090000.jsonl"
    assert f"  {orphan}: no session file of its own in this import" in text
    assert counts["bad"] == len(over) + 1
    # A file already in the store (no PATH) is held to the same limit.
    grown = transcript(store.root / "dashboard_grown.jsonl", "Grown", "x" * 3000)
    text, counts = run()
    assert f"  dashboard_grown.jsonl: too large: {grown.stat().st_size} bytes" in text
    assert not Session.objects.filter(key="dashboard:grown").exists()


@pytest.fixture
def victim(store, alice):
    """alice's session, with rows, already in the store."""
    session_create(name="victim", app=alice)
    session_append_row(key="dashboard:victim", role="user", content="alice's own words")
    session_append_row(key="dashboard:victim", role="assistant", content="and the answer")
    return store


def test_an_archive_never_joins_an_existing_session(victim, bob, tmp_path):
    store = victim
    before_rows = store.read_session("dashboard:victim").rows
    before_row = Session.objects.filter(key="dashboard:victim").values().get()
    src = tmp_path / "src"
    src.mkdir()
    # Its stem, as the bare legacy stem, and with the session file itself offered too.
    archive(src / "archive" / "dashboard_victim__20200101-000000.jsonl", "INJECTED BY IMPORT DIR")
    archive(src / "archive" / "victim__20200101-000000.jsonl", "INJECTED BY IMPORT DIR")
    (src / "dashboard_victim.jsonl").write_bytes(store.path("dashboard:victim").read_bytes())

    text, counts = run(str(src), "--app", "bob")

    refused = (
        "its session dashboard_victim.jsonl is already in the store; archives are imported "
        "only together with their own new session file"
    )
    assert f"  archive/dashboard_victim__20200101-000000.jsonl: {refused}" in text
    assert f"  archive/victim__20200101-000000.jsonl: {refused}" in text
    assert (counts["bad"], counts["copied"]) == (2, 0)
    view = store.read_session("dashboard:victim")
    assert view.rows == before_rows
    assert "INJECTED" not in json.dumps(view.rows)
    assert b"INJECTED" not in store_bytes(store)
    assert Session.objects.filter(key="dashboard:victim").values().get() == before_row


def test_an_archive_without_its_session_waits_for_no_one(store, tmp_path):
    """An orphan archive would be read by whichever session is created under its stem next."""
    src = tmp_path / "src"
    archive(src / "archive" / "ghost__20200101-000000.jsonl", "INJECTED BY IMPORT DIR")
    archive(src / "archive" / "not-an-archive-name.jsonl", "INJECTED BY IMPORT DIR")

    text, counts = run(str(src))

    assert "  archive/ghost__20200101-000000.jsonl: no session file of its own in this import" in (
        text
    )
    assert "  archive/not-an-archive-name.jsonl: not an archive name" in text
    assert counts["bad"] == 2
    session_create(name="ghost", app=None)
    assert store.read_session("dashboard:ghost").rows == []
    assert b"INJECTED" not in store_bytes(store)


def test_a_bad_new_file_takes_the_archives_it_brought_with_it(store, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "dashboard_junk.jsonl").write_bytes(b"")
    archive(src / "archive" / "dashboard_junk__20200101-000000.jsonl", "LEFT BEHIND")
    transcript(src / "dashboard_ok.jsonl", "Ok", "kept")
    archive(src / "archive" / "dashboard_ok__20200101-000000.jsonl", "archived with its session")

    _text, counts = run(str(src))

    assert (counts["imported"], counts["bad"], counts["copied"]) == (1, 1, 2)
    assert [p.name for p in store.archive_dir.iterdir()] == ["dashboard_ok__20200101-000000.jsonl"]
    rows = [r["content"] for r in store.read_session("dashboard:ok").rows]
    assert rows == ["archived with its session", "kept"]
    assert b"LEFT BEHIND" not in store_bytes(store)


def test_verbosity_0_prints_nothing_per_file(store, fixture_tree):
    (fixture_tree / "broken.jsonl").write_bytes(b"\n")
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_transcripts", str(fixture_tree), stdout=out, verbosity=0)
    assert out.getvalue() == ""
    assert raised.value.returncode == 1
    assert str(raised.value) == "1 files skipped (bad 1, conflicts 0)"
    assert Session.objects.count() == 4  # the rest was imported
    (fixture_tree / "broken.jsonl").unlink()
    out = StringIO()
    call_command("import_transcripts", str(fixture_tree), stdout=out, verbosity=0)
    assert out.getvalue() == ""


NUL_FILE = (
    '{"_type": "metadata", "key": "dashboard:nul\\u0000", "title": "a\\u0000b", '
    '"memory_mode": "m\\u0000x", "app": "alice\\u0000"}\n'
    '{"role": "user", "content": "a row with \\u0000 in it", "ts": "2025-01-01T00:00:00+00:00"}\n'
)


def nul_tree(fixture_tree: Path) -> Path:
    (fixture_tree / "dashboard_nul_.jsonl").write_text(NUL_FILE)
    (fixture_tree / "dashboard_early.jsonl").write_text(  # a stamp no column can hold
        '{"_type": "metadata", "title": "E", "created_at": "0001-01-01T00:00:00+14:00"}\n'
        '{"role": "user", "content": "e", "ts": "0001-01-01T00:00:00+14:00"}\n'
    )
    return fixture_tree


def check_nul_import(text: str) -> None:
    """Shared with the PostgreSQL profile: same outcome on both backends."""
    assert "warning: line 0's title holds NUL characters: mirrored without them" in text
    assert "warning: line 0's key holds NUL characters: not used as the key" in text
    assert sorted(Session.objects.values_list("key", flat=True)) == sorted(
        [*KEYS, "dashboard:nul_", "dashboard:early"]
    )
    session = Session.objects.get(key="dashboard:nul_")
    assert (session.title, session.memory_mode, session.app) == ("ab", "mx", None)
    assert session.row_count == 1
    early = Session.objects.get(key="dashboard:early")
    assert (early.row_count, early.last_activity) == (1, None)
    for key in ("dashboard:nul_", "dashboard:early"):
        assert mirror_diff(key) == {}
    code, out = verify()
    assert code == 0, out
    Session.objects.filter(key="dashboard:nul_").update(title="stale", row_count=9)
    code, out = verify("--repair")
    assert code == 0, out
    assert "repaired dashboard:nul_: drift" in out
    assert Session.objects.get(key="dashboard:nul_").title == "ab"
    # A file that reached the store without an import: the repair indexes it the same way.
    store = get_store()
    (store.root / "dashboard_late_.jsonl").write_text(NUL_FILE.replace("nul", "late"))
    code, out = verify("--repair")
    assert code == 0, out
    assert "repaired dashboard:late_: file_without_row" in out
    assert Session.objects.get(key="dashboard:late_").title == "ab"


def test_nul_characters_in_line_0_never_abort_the_import(store, fixture_tree, alice):
    text, counts = run(str(nul_tree(fixture_tree)))
    assert (counts["imported"], counts["bad"]) == (6, 0)
    check_nul_import(text)


def test_verify_never_reads_through_a_link(store, fixture_tree):
    run(str(fixture_tree))
    path = store.path("dashboard:starter")
    path.unlink()
    path.symlink_to("/etc/passwd")
    code, text = verify("--repair")
    assert code == 1
    assert f"PROBLEM dashboard_starter.jsonl: not_regular_file: {LINK_REASON}; skipped" in text
    assert Path("/etc/passwd").read_text().splitlines()[0] not in text
    findings = session_verify(key="dashboard:starter", session=None)  # the admin's path
    assert [(f.kind, f.detail) for f in findings] == [("not_regular_file", LINK_REASON)]
    # Its row is not taken for one whose file is gone: repair leaves it.
    assert Session.objects.filter(key="dashboard:starter").exists()
    assert "row_without_file" not in text


def test_rotate_never_rewrites_through_a_link(store, fixture_tree, tmp_path):
    """A forced rotation of a linked transcript used to read the target into the store."""
    run(str(fixture_tree))
    outside = transcript(tmp_path / "outside.jsonl", "Outside", "OUTSIDE SECRET", "more")
    before = outside.read_bytes()
    store.path("dashboard:starter").unlink()
    store.path("dashboard:starter").symlink_to(outside)  # its slot "starter" still names it
    for args in (("--force",), ("--force", "starter")):
        out = StringIO()
        with pytest.raises(CommandError) as raised:
            call_command("rotate_transcripts", *args, stdout=out)
        assert raised.value.returncode == 1
        assert f"skipped: {LINK_REASON}" in out.getvalue()
    assert store.path("dashboard:starter").is_symlink()
    assert outside.read_bytes() == before
    assert b"OUTSIDE SECRET" not in store_bytes(store)
