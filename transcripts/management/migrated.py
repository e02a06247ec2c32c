"""One check for every command that reads or writes the database: is it migrated?

Run before anything else, so a command started on a new home stops with one line telling
the person to run ``migrate`` instead of an OperationalError after it has copied files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor

# The venv's python: in a fresh checkout django is installed nowhere else. The database is
# named: a second terminal without KIROCREW_HOME reads ./var, and the person should see
# that before migrating a new empty one there. Settings have created the data root and an
# empty SQLite file by now, but no session or setting was changed.
NOT_MIGRATED = (
    "the database {db} is not set up yet (no session or setting was changed): "
    "run `.venv/bin/python manage.py migrate` first"
)


def database_label(settings_dict: Mapping[str, Any]) -> str:
    """The database as a person finds it: SQLite's file path, else a URL without the
    password (``postgresql://kiro@db.local:5432/kirocrew``)."""
    name = str(settings_dict.get("NAME") or "")
    engine = str(settings_dict.get("ENGINE") or "")
    if "sqlite" in engine:  # Django's backend or the project's (kirocrew_site/sqlite_home)
        return name
    scheme = engine.rsplit(".", 1)[-1]
    user = str(settings_dict.get("USER") or "")
    host = str(settings_dict.get("HOST") or "localhost")
    port = settings_dict.get("PORT")
    where = f"{host}:{port}" if port else host
    return f"{scheme}://{user + '@' if user else ''}{where}/{name}"


def ensure_migrated(database: str = DEFAULT_DB_ALIAS) -> None:
    """Raise a one-line CommandError (exit 1) unless every migration is applied."""
    connection = connections[database]
    label = database_label(connection.settings_dict)
    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        raise CommandError(f"cannot open the database {label}: {exc}", returncode=1) from None
    if pending:
        raise CommandError(NOT_MIGRATED.format(db=label), returncode=1)
