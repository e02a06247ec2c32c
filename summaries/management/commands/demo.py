from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from summaries.core.config import load_config, write_enabled
from summaries.demo import SAMPLES_DIR, DemoClient, replay, wait_for_server
from transcripts.models import App
from transcripts.services import app_create, session_import_paths


class Command(BaseCommand):
    help = (
        "Import the sample sessions, turn summaries on, create a demo login, and replay one "
        "session turn by turn through a running server's API so the dashboard updates live."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running server")
        parser.add_argument("--pause", type=float, default=2.0, help="seconds between rows")
        parser.add_argument(
            "--wait", type=float, default=60.0, help="seconds to wait for the server"
        )
        parser.add_argument("--no-replay", action="store_true", help="only import and set up")

    def handle(self, *args: Any, **options: Any) -> None:
        result = session_import_paths(paths=[SAMPLES_DIR])
        counts = result.counts()
        self.stdout.write(
            f"demo: sample sessions imported {counts.get('imported', 0)}, "
            f"unchanged {counts.get('unchanged', 0)}"
        )
        config_path = settings.KIROCREW_CONFIG_PATH
        if not config_path.exists() or not load_config(config_path, {}).enabled:
            write_enabled(config_path, True)
            self.stdout.write("demo: session summaries turned on in config.json")
        self._ensure_login()
        if options["no_replay"]:
            return
        App.objects.filter(name="demo-replay").delete()
        _, token = app_create(name="demo-replay")
        if not wait_for_server(options["url"], options["wait"]):
            self.stderr.write(f"demo: no server answered at {options['url']}; skipped the replay")
            return
        replay(DemoClient(options["url"], token), pause=options["pause"], say=self._say)

    def _say(self, message: str) -> None:
        self.stdout.write(f"demo: {message}")

    def _ensure_login(self) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            return
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser("demo", "demo@localhost", password)
        self.stdout.write(
            self.style.SUCCESS(f"demo: log in at /login/ as 'demo' with password {password}")
        )
