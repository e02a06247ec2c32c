"""The original's sample sessions imported into PostgreSQL, then ``verify_transcripts``:
the mirror (JSON fields, big integers, the unique keys) round-trips on PostgreSQL
exactly as on SQLite, and a second import over the unchanged tree changes nothing."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from tests.transcripts.django.util import verify
from transcripts.models import Session, Slot
from transcripts.runtime import get_store
from transcripts.services import session_append_row, session_verify_all

pytestmark = [pytest.mark.services, pytest.mark.django_db]


def mirror() -> list[Any]:
    return list(Session.objects.order_by("key").values())


def test_the_fixtures_import_and_verify_clean_on_postgres(services_home, on_postgres, fixture_tree):
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())

    keys = sorted(Session.objects.values_list("key", flat=True))
    assert len(keys) == len(list(fixture_tree.glob("*.jsonl"))) == 4
    assert Slot.objects.count() == 4
    store = get_store()
    for key in keys:
        session = Session.objects.get(key=key)
        view = store.read_session(key)
        identity = store.identity(key)
        assert identity is not None
        assert (session.sig, session.gen) == (identity.sig, identity.gen)
        assert session.row_count == len(view.rows)
        assert session.sig > 2**31  # nanoseconds: a 64-bit column, not a 32-bit one
    code, text = verify()
    assert code == 0, text
    assert "Checked 4 transcripts: 0 problems found, 0 repaired, 0 remaining" in text

    # A second import over the unchanged tree changes nothing; verify stays clean.
    before = mirror()
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())
    assert mirror() == before
    assert verify()[0] == 0


def test_appends_after_the_import_keep_the_mirror_exact(services_home, on_postgres, fixture_tree):
    """The append path's incremental mirror update (F() arithmetic, Greatest/Coalesce on
    last_activity, a has_key filter on the anomaly JSON) is PostgreSQL SQL here."""
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())
    key = "dashboard:starter"
    before = Session.objects.get(key=key)
    session_append_row(key=key, role="user", content="One more question about the export.")
    session_append_row(key=key, role="assistant", content="Answered; nothing else changed.")

    after = Session.objects.get(key=key)
    assert after.row_count == before.row_count + 2
    assert after.user_turns == before.user_turns + 1
    assert after.last_activity is not None
    assert before.last_activity is not None
    assert after.last_activity > before.last_activity
    result = session_verify_all()
    assert not result.problems, result.findings


def test_nul_in_line_0_never_aborts_import_or_repair_on_postgres(
    services_home, on_postgres, fixture_tree
):
    """PostgreSQL text refuses NUL (a DataError used to abort the whole command): the file
    is imported with NUL left out of the mirror, the rest of the directory too, and
    ``verify_transcripts --repair`` re-syncs it; the same checks as the SQLite profile's."""
    from tests.transcripts.django.test_import import run
    from tests.transcripts.django.test_import_hardening import check_nul_import, nul_tree

    text, counts = run(str(nul_tree(fixture_tree)))
    assert (counts["imported"], counts["bad"]) == (6, 0)
    check_nul_import(text)


def test_verify_repair_indexes_a_nul_file_on_postgres(services_home, on_postgres, fixture_tree):
    """Files placed in the store by hand, one with NUL in line 0: ``--repair`` used to stop
    at it with a DataError; now every file gets its row."""
    from tests.transcripts.django.test_import_hardening import NUL_FILE

    root = get_store().root
    root.mkdir(parents=True, exist_ok=True)
    for path in fixture_tree.glob("*.jsonl"):
        (root / path.name).write_bytes(path.read_bytes())
    (root / "dashboard_nul_.jsonl").write_text(NUL_FILE)

    code, text = verify("--repair")
    assert code == 0, text
    assert "repaired dashboard:nul_: file_without_row" in text
    assert Session.objects.count() == 5
    assert Session.objects.get(key="dashboard:nul_").title == "ab"
    assert verify()[0] == 0
