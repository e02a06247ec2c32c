from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from summaries.services import summary_generate


class Command(BaseCommand):
    help = "Run one forced summary pass for SLOT (exit 0 stored or current, 1 with the reason)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slot", help="the slot name, e.g. research-notes")

    def handle(self, *args: Any, **options: Any) -> None:
        outcome = summary_generate(slot_name=options["slot"], force=True)
        if outcome.ok:
            self.stdout.write(self.style.SUCCESS(f"{options['slot']}: {outcome.reason}"))
            return
        self.stderr.write(f"{options['slot']}: not summarized: {outcome.reason}")
        raise SystemExit(1)
