"""Django's SQLite backend, plus reads from a database on a read-only filesystem: a WAL
database cannot be opened there even ``mode=ro`` (SQLite would create ``-shm``). With no
``-wal`` file every commit is in the main file, so it is opened ``immutable``: exact reads,
and a write fails with SQLITE_READONLY (the API's 503).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.db.backends.sqlite3 import base
from django.db.backends.sqlite3._functions import (  # type: ignore[import-untyped]
    register as register_functions,
)

log = logging.getLogger(__name__)


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def immutable_uri(path: Path) -> str | None:
    """None when the normal open's error stands (a writable filesystem, or a ``-wal`` file
    whose frames ``immutable`` would not read)."""
    if not _read_only_fs(path) or not path.is_file():
        return None
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return None
    return f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        try:
            return super().get_new_connection(conn_params)
        except sqlite3.OperationalError:
            name = str(conn_params.get("database", ""))
            uri = (
                None
                if name.startswith("file:") or name == ":memory:"
                else immutable_uri(Path(name))
            )
            if uri is None:
                raise
        log.warning("database %s is on a read-only filesystem: opened read-only", name)
        conn = sqlite3.connect(**{**conn_params, "database": uri, "uri": True})
        register_functions(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn
