"""One check for every command that reads or writes the database: is it migrated?

Run before anything else, so a command started on a new home stops with one line telling
the person to run ``migrate`` instead of an OperationalError after it has copied files.
"""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor

# The venv's python: in a fresh checkout django is installed nowhere else. "No session or
# setting": settings have already created the data root, its secret key and the empty
# SQLite file by now, but nothing was imported, copied or configured.
NOT_MIGRATED = (
    "the database is not set up yet (no session or setting was changed): "
    "run `.venv/bin/python manage.py migrate` first"
)


def ensure_migrated(database: str = DEFAULT_DB_ALIAS) -> None:
    """Raise a one-line CommandError (exit 1) unless every migration is applied."""
    connection = connections[database]
    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        raise CommandError(f"cannot open the database: {exc}", returncode=1) from None
    if pending:
        raise CommandError(NOT_MIGRATED, returncode=1)
