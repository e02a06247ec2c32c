"""Create an API app and print its token, once, alone on the last line."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from transcripts.services import AppExists, AppNameInvalid, app_create


class Command(BaseCommand):
    help = "Create an API app; its token is printed once (alone on the last line) and not stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            app, token = app_create(name=options["name"])
        except (AppExists, AppNameInvalid) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Created app {app.name!r}. Its token follows; it is not stored and will not be "
            "shown again:"
        )
        self.stdout.write(token)
