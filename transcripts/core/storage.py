"""Storage faults: which failures mean "the disk is full" or "the store cannot be written".

One rule for the store's ``OSError`` and SQLite's and PostgreSQL's errors as Django wraps
them (docs/DESIGN.md, "Storage faults have one rule"). Pure: database errors are known by
their own codes (``sqlite_errorcode``, ``sqlstate``), without importing a driver.
"""

from __future__ import annotations

import enum
import errno
import sqlite3


class StorageFault(enum.Enum):
    FULL = "storage_full"  # 507: ENOSPC, EDQUOT, EFBIG; SQLITE_FULL; PostgreSQL disk_full
    UNAVAILABLE = "storage_unavailable"  # 503: read-only, I/O error, no access

    @property
    def status(self) -> int:
        return 507 if self is StorageFault.FULL else 503

    @property
    def message(self) -> str:
        if self is StorageFault.FULL:
            return "the transcript store is out of space"
        return "the transcript store is unavailable"


FULL, UNAVAILABLE = StorageFault.FULL, StorageFault.UNAVAILABLE
# EACCES/EPERM: a home the server may no longer write (chmod, a read-only bind mount seen
# by a non-root server) is the same condition as a read-only one.
_ERRNOS = dict.fromkeys((errno.ENOSPC, errno.EDQUOT, errno.EFBIG), FULL) | dict.fromkeys(
    (errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM), UNAVAILABLE
)
# SQLite primary result codes (extended codes carry them in the low byte).
_SQLITE = {sqlite3.SQLITE_FULL: FULL} | dict.fromkeys(
    (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM),
    UNAVAILABLE,
)
# PostgreSQL SQLSTATEs: disk_full; read_only_sql_transaction, io_error.
_SQLSTATES = {"53100": FULL, "25006": UNAVAILABLE, "58030": UNAVAILABLE}


def _own_fault(exc: BaseException) -> StorageFault | None:
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return None if code is None else _SQLITE.get(code & 0xFF)
    sqlstate = getattr(exc, "sqlstate", None)  # psycopg's errors
    if isinstance(sqlstate, str):
        return _SQLSTATES.get(sqlstate)
    code = getattr(exc, "errno", None)  # OSError and the store's TranscriptWriteError
    return _ERRNOS.get(code) if isinstance(code, int) else None


def storage_fault(exc: BaseException) -> StorageFault | None:
    """The storage fault behind ``exc`` (itself or its causes), or None for anything else."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 8:
        seen.add(id(current))
        fault = _own_fault(current)
        if fault is not None:
            return fault
        # Only explicit causes (Django wraps a driver error ``from`` it): an unrelated
        # error raised while handling a storage fault is not one.
        current = current.__cause__
    return None
