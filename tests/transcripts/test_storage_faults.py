"""Which failures are storage faults: one rule for the store's OSErrors and both databases'
errors (the API answers FULL 507 ``storage_full`` and UNAVAILABLE 503
``storage_unavailable``; anything else stays a 500)."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import psycopg.errors
import pytest
from django.db.utils import OperationalError

from transcripts.core.errors import TranscriptWriteError
from transcripts.core.storage import StorageFault, storage_fault


def _real_readonly_error(tmp_path: Path) -> sqlite3.OperationalError:
    """SQLite's own error for a write to a database opened read-only."""
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError) as caught:
            ro.execute("INSERT INTO t VALUES (1)")
    finally:
        ro.close()
    return caught.value


@pytest.mark.parametrize(
    ("code", "fault"),
    [
        (errno.ENOSPC, StorageFault.FULL),
        (errno.EDQUOT, StorageFault.FULL),
        (errno.EFBIG, StorageFault.FULL),
        (errno.EROFS, StorageFault.UNAVAILABLE),
        (errno.EIO, StorageFault.UNAVAILABLE),
        (errno.EACCES, StorageFault.UNAVAILABLE),
        (errno.ENOENT, None),
        (errno.EINVAL, None),
    ],
)
def test_store_errors_are_classified_by_errno(code: int, fault: StorageFault | None) -> None:
    assert storage_fault(OSError(code, "x")) is fault
    assert storage_fault(TranscriptWriteError("/p", code, "append failed")) is fault


def test_a_sqlite_error_wrapped_by_django_is_classified_by_its_result_code(tmp_path: Path):
    readonly = _real_readonly_error(tmp_path)
    assert readonly.sqlite_errorname == "SQLITE_READONLY"
    with pytest.raises(OperationalError) as wrapped:
        raise OperationalError(str(readonly)) from readonly  # how Django wraps it
    assert storage_fault(wrapped.value) is StorageFault.UNAVAILABLE
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL
    assert storage_fault(full) is StorageFault.FULL
    assert storage_fault(sqlite3.OperationalError("no such table: t")) is None


def test_postgresql_errors_are_classified_by_sqlstate() -> None:
    assert storage_fault(psycopg.errors.DiskFull()) is StorageFault.FULL
    assert storage_fault(psycopg.errors.ReadOnlySqlTransaction()) is StorageFault.UNAVAILABLE
    assert storage_fault(psycopg.errors.UniqueViolation()) is None


def test_an_error_raised_while_handling_a_storage_fault_is_not_one() -> None:
    """Only explicit causes count: a bug in an error path must stay a 500."""

    def fails_in_its_error_path() -> None:
        try:
            raise OSError(errno.ENOSPC, "full")
        except OSError:
            raise KeyError("unrelated") from None

    with pytest.raises(KeyError) as caught:
        fails_in_its_error_path()
    assert caught.value.__context__ is not None
    assert storage_fault(caught.value) is None
