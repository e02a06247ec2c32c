"""verify_transcripts: transcript invariants, mirror drift, and a repair that touches only the mirror."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from tests.transcripts.django.util import mirror_diff, verify
from transcripts.core.fold import fold_bytes
from transcripts.models import Session, Slot
from transcripts.services import session_append_row, session_create, session_verify
from transcripts.services import verify as verify_module

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(store, fixture_tree):
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())
    return store


def test_a_clean_store_verifies(imported):
    code, text = verify()
    assert code == 0, text
    assert "Checked 4 transcripts: 0 problems found, 0 repaired, 0 remaining" in text


def test_drift_is_found_and_repaired(imported):
    Session.objects.filter(key="dashboard:starter").update(title="stale", row_count=99, sig=1)
    code, text = verify()
    assert code == 1
    assert "PROBLEM dashboard:starter: drift:" in text
    assert "sig mirror=1" in text
    assert "row_count mirror=99 disk=4" in text
    assert "title" in text
    before = imported.path("dashboard:starter").read_bytes()
    code, text = verify("--repair")
    assert code == 0
    assert "repaired dashboard:starter: drift" in text
    assert imported.path("dashboard:starter").read_bytes() == before
    assert mirror_diff("dashboard:starter") == {}
    assert verify()[0] == 0


def test_torn_tail_is_reported_and_never_repaired(imported):
    path = imported.path("dashboard:triage-demo")
    with path.open("ab") as fp:
        fp.write(b'{"role": "assistant", "content": "half a li')
    torn = path.read_bytes()
    code, text = verify("--repair")
    assert code == 1
    assert "PROBLEM dashboard:triage-demo: torn_tail: 1 in dashboard_triage-demo.jsonl" in text
    assert "drift" in text
    assert "repaired dashboard:triage-demo: drift" in text
    assert path.read_bytes() == torn  # repair never touches a transcript
    assert "1 remaining" in text


def test_ts_invariant_and_orphan_revisions(store):
    session_create(name="s1", app=None)
    path = store.path("dashboard:s1")
    with path.open("ab") as fp:
        fp.write(b'{"role": "user", "content": "a", "ts": "2025-01-01T00:00:01+00:00"}\n')
        fp.write(b'{"role": "user", "content": "b", "ts": "2025-01-01T00:00:01+00:00"}\n')
        fp.write(b'{"role": "user", "content": "c", "ts": "2025-01-01T00:00:00+00:00"}\n')
        fp.write(
            b'{"_type": "revision", "target_ts": "1999-01-01T00:00:00+00:00", '
            b'"patch": {"content": "x"}, "ts": "2025-01-01T00:00:02+00:00"}\n'
        )
    kinds = {f.kind for f in session_verify(key="dashboard:s1", session=None)}
    assert {"dup_ts", "non_monotonic_ts", "orphan_revision", "file_without_row"} <= kinds


def test_fold_identity_breach_is_found(store, monkeypatch):
    session_create(name="s1", app=None)
    session_append_row(key="dashboard:s1", role="user", content="kept")

    def lossy_fold(data: bytes, **kwargs):
        folded = fold_bytes(data, **kwargs)
        folded.rows = folded.rows[1:]
        return folded

    monkeypatch.setattr(verify_module, "fold_bytes", lossy_fold)
    findings = session_verify(key="dashboard:s1", session=Session.objects.get())
    assert [f.kind for f in findings] == ["fold_identity"]
    assert "fold gives 0 rows, the lines hold 1" in findings[0].detail


def test_rows_without_files_and_files_without_rows(imported):
    imported.path("dashboard:starter").unlink()
    extra = imported.root / "dashboard_extra.jsonl"
    extra.write_text('{"_type": "metadata", "title": "E"}\n')
    code, text = verify()
    assert code == 1
    assert "PROBLEM dashboard:starter: row_without_file" in text
    assert "PROBLEM dashboard:extra: file_without_row: dashboard_extra.jsonl" in text
    code, text = verify("--repair")
    assert code == 0, text
    assert not Session.objects.filter(key="dashboard:starter").exists()
    assert not Slot.objects.filter(name="starter").exists()
    assert Slot.objects.get(name="extra").session.title == "E"


def test_exit_codes_from_the_command_line(tmp_path: Path, fixture_tree):
    """The real process: import skips a bad file, imports the rest and exits 1; verify exits 1
    on a problem."""
    (fixture_tree / "bad.jsonl").write_bytes(b"\n")
    (tmp_path / "cli-home").mkdir()
    env = {**os.environ, "KIROCREW_HOME": str(tmp_path / "cli-home")}
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, str(Path(django_settings.BASE_DIR) / "manage.py")]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*manage, *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )

    assert cli("migrate", "--noinput", "-v0").returncode == 0
    result = cli("import_transcripts", str(fixture_tree))
    assert result.returncode == 1, result.stderr
    assert "bad.jsonl: line 0 is not metadata and no rows" in result.stdout
    assert "Imported 4, unchanged 0, bad 1" in result.stdout
    assert "1 files skipped (bad 1, conflicts 0)" in result.stderr
    assert cli("verify_transcripts").returncode == 0
    with (tmp_path / "cli-home" / "sessions" / "dashboard_starter.jsonl").open("ab") as fp:
        fp.write(b"{torn")
    result = cli("verify_transcripts")
    assert result.returncode == 1
    assert "torn_tail" in result.stdout
