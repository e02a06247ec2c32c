"""Delete archives older than the retention, judged by their header's archived_at."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from transcripts.core.words import counted
from transcripts.management.migrated import ensure_migrated
from transcripts.services import archive_cleanup
from transcripts.services.maintenance import retention_days


class Command(BaseCommand):
    help = (
        "Delete transcript archives whose header archived_at is older than --days "
        "(default: KIROCREW_ARCHIVE_RETENTION_DAYS, 30); undatable archives are kept. "
        "Example: manage.py cleanup_archives --days 90 --dry-run"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="list, delete nothing")
        parser.add_argument("--days", type=int, default=None, help="retention in days (<0: off)")

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        days = retention_days() if options["days"] is None else options["days"]
        dry_run: bool = options["dry_run"]
        decisions = archive_cleanup(days=days, dry_run=dry_run)
        verbosity: int = options["verbosity"]
        verb = "would delete" if dry_run else "deleted"
        for decision in decisions:
            if decision.skipped:  # never opened, never deleted
                if verbosity >= 1:
                    self.stdout.write(f"skipped archive/{decision.path.name}: {decision.skipped}")
                continue
            stamp = decision.archived_at.isoformat() if decision.archived_at else "unknown"
            name = f"archive/{decision.path.name}"
            if decision.expired and verbosity >= 1:
                self.stdout.write(f"{verb} {name} (archived_at {stamp})")
            elif not decision.expired and verbosity >= 2:
                self.stdout.write(f"kept {name} (archived_at {stamp})")
        expired = sum(1 for d in decisions if d.expired)
        skipped = sum(1 for d in decisions if d.skipped)
        if verbosity >= 1:
            self.stdout.write(
                f"{verb.capitalize()} {expired} of "
                f"{counted(len(decisions) - skipped, 'archive')} "
                f"(retention {days} days{', disabled' if days < 0 else ''})",
                self.style.SUCCESS,
            )
        if skipped:
            raise CommandError(
                f"{counted(skipped, 'entry', 'entries')} in archive/ skipped", returncode=1
            )
