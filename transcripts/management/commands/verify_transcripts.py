"""Check every transcript's invariants and the mirror; exit 1 when a problem remains."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from transcripts.core.words import counted
from transcripts.management.migrated import ensure_migrated
from transcripts.services import Finding, session_verify_all


class Command(BaseCommand):
    help = (
        "Verify transcripts: ts invariant, fold identity, orphan revisions, torn tails and "
        "mirror drift. --repair re-syncs the mirror from disk; transcripts are never touched. "
        "Example: manage.py verify_transcripts --repair"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repair", action="store_true", help="re-sync the database mirror")

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        verbosity: int = options["verbosity"]

        def progress(name: str, findings: list[Finding]) -> None:
            if verbosity >= 2 and not findings:
                self.stdout.write(f"{name}: ok")

        result = session_verify_all(repair=options["repair"], progress=progress)
        if verbosity >= 1:
            for finding in result.findings:
                self.stdout.write(f"PROBLEM {finding}", self.style.WARNING)
            for finding in result.repaired:
                self.stdout.write(f"repaired {finding.key}: {finding.kind}", self.style.SUCCESS)
        remaining = len(result.problems)
        summary = (
            f"Checked {counted(result.checked, 'transcript')}: "
            f"{counted(len(result.findings), 'problem')} found, "
            f"{len(result.repaired)} repaired, {remaining} remaining"
        )
        if remaining:
            raise CommandError(summary, returncode=1)
        if verbosity >= 1:
            self.stdout.write(summary, self.style.SUCCESS)
