"""Create an API app (or give an existing one a new token) and print its token once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from transcripts.management.migrated import ensure_migrated
from transcripts.models import App
from transcripts.services import AppExists, AppNameInvalid, app_create, app_token_rotate


class Command(BaseCommand):
    help = (
        "Create an API app; its token is printed once (alone on the last line; with -v 0 it is "
        "the only line) and not stored. An existing NAME exits 1 unless --rotate is given, "
        "which issues a new token and revokes the old one (the app keeps its sessions). "
        "Example: TOKEN=$(manage.py create_app my-runner -v 0)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the app's name, e.g. my-runner")
        parser.add_argument(
            "--rotate",
            action="store_true",
            help="NAME exists: print a new token for it; the old token stops working",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        name: str = options["name"]
        try:
            if options["rotate"]:
                app, token = app_token_rotate(name=name)
                done = "New token for app"
            else:
                app, token = app_create(name=name)
                done = "Created app"
        except App.DoesNotExist:
            raise CommandError(
                f"no app named {name!r}: create it with `create_app {name}`", returncode=1
            ) from None
        except AppExists:
            raise CommandError(
                f"an app named {name!r} already exists and its token cannot be shown again; "
                f"`create_app {name} --rotate` prints a new one (the old one stops working)",
                returncode=1,
            ) from None
        except AppNameInvalid as exc:
            raise CommandError(str(exc), returncode=1) from exc
        if options["verbosity"] >= 1:
            self.stdout.write(
                f"{done} {app.name!r}. Its token follows; it is not stored and will not be "
                "shown again:"
            )
        self.stdout.write(token)
