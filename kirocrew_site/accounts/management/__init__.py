"""``createsuperuser`` and ``changepassword`` that say "run migrate first" in one line on a
new database, instead of Django's ``no such table: auth_user`` traceback."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from transcripts.management.migrated import ensure_migrated


class MigratedFirst(BaseCommand):
    def execute(self, *args: Any, **options: Any) -> Any:
        ensure_migrated(options.get("database") or "default")
        return super().execute(*args, **options)
