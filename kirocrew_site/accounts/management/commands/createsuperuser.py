"""``createsuperuser`` that says "run migrate first" in one line on a new database, instead
of Django's ``no such table: auth_user`` traceback."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands import createsuperuser

from transcripts.management.migrated import ensure_migrated


class Command(createsuperuser.Command):
    def execute(self, *args: Any, **options: Any) -> Any:
        ensure_migrated(options.get("database") or "default")
        return super().execute(*args, **options)
