"""Rotate transcripts over the size limit (or the named ones with --force)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from transcripts.core.errors import SessionNotFound
from transcripts.core.words import counted
from transcripts.management.migrated import ensure_migrated
from transcripts.services import session_rotate_all


class Command(BaseCommand):
    help = (
        "Rotate transcripts over the limits: keep the newest rows, archive the rest, fold "
        "revisions, advance gen; the mirror is re-synced. KEY may be a transcript key or a slot. "
        "Entries that are not regular files (links, FIFOs…) are skipped and exit 1. "
        "Example: manage.py rotate_transcripts research-notes --force"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("keys", nargs="*", metavar="KEY")
        parser.add_argument("--force", action="store_true", help="rewrite even under the limits")

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        try:
            done = session_rotate_all(keys=options["keys"], force=options["force"])
        except SessionNotFound as exc:
            raise CommandError(f"no transcript or slot named {exc}") from exc
        failed = [(key, r) for key, r in done if isinstance(r, str)]
        dropped = sum(r for _, r in done if isinstance(r, int))
        if options["verbosity"] >= 1:
            for key, r in done:
                text = f"{key}: {r}" if isinstance(r, str) else f"{key}: dropped {r} rows"
                self.stdout.write(text, self.style.ERROR if isinstance(r, str) else None)
            if not done:
                self.stdout.write("Nothing over the limits.")
        rotated = counted(len(done) - len(failed), "transcript")
        summary = f"Rotated {rotated}, {counted(dropped, 'row')} archived"
        if failed:
            raise CommandError(f"{summary}; {len(failed)} failed or skipped", returncode=1)
        if options["verbosity"] >= 1:
            self.stdout.write(summary, self.style.SUCCESS)
