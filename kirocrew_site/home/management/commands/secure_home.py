"""``manage.py secure_home``: make ``KIROCREW_HOME`` readable by its owner only."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kirocrew_site.home.core.modes import tighten


class Command(BaseCommand):
    help = (
        "Remove group and other permissions from every folder and file under KIROCREW_HOME "
        "(folders 0700, files 0600); links are never followed. -v 2 lists each change; exits "
        "1 when an entry could not be changed. Needs no database. "
        "Example: .venv/bin/python manage.py secure_home -v 2"
    )
    # The check this command fixes would only repeat itself before the fix.
    requires_system_checks: list[str] = []

    def handle(self, *args: Any, **options: Any) -> None:
        home = settings.KIROCREW_HOME
        verbosity = int(options["verbosity"])
        report = tighten(home)
        if verbosity >= 2:
            for change in report.changed:
                self.stdout.write(f"{change.path}: {change.old:o} -> {change.new:o}")
            for path, why in report.skipped:
                self.stdout.write(f"{path}: skipped, {why}")
        for path, error in report.failed:
            self.stderr.write(f"{path}: could not change: {error}")
        folders = sum(change.folder for change in report.changed)
        files = len(report.changed) - folders
        skipped = (
            f"; {len(report.skipped)} skipped (not a file or folder)" if report.skipped else ""
        )
        if verbosity >= 1:
            self.stdout.write(
                f"{home}: {folders} folders and {files} files made private (0700/0600){skipped}"
            )
        if report.failed:
            raise CommandError(f"{len(report.failed)} entries could not be changed (see above)")
