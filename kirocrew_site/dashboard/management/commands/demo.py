"""``manage.py demo``: the first-run experience of ``make run``; safe to run any number of times."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kirocrew_site.demo import (
    REPLAY_APP,
    REPLAY_SLOT,
    SAMPLES_DIR,
    DemoClient,
    DemoError,
    login_box,
    replay,
    wait_for_server,
)
from summaries.core.config import load_config, write_enabled
from summaries.services import PassResult, summary_generate
from transcripts.management.migrated import ensure_migrated
from transcripts.models import App, Slot
from transcripts.services import (
    ImportResult,
    app_create,
    app_token_rotate,
    session_delete,
    session_import_paths,
)

DEMO_USER = "demo"
# What a person types in a fresh checkout: django is only installed in the venv.
CHANGE_PASSWORD = f".venv/bin/python manage.py changepassword {DEMO_USER}"


class Command(BaseCommand):
    help = (
        "Import the sample sessions and summarize them, turn summaries on, create a demo "
        "login, and replay one session turn by turn through a running server's API so the "
        "dashboard updates live. Idempotent: a re-run replays the live session afresh. "
        "Example: manage.py demo --url http://127.0.0.1:8000 (or --no-replay)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running server")
        parser.add_argument("--pause", type=float, default=2.0, help="seconds between rows")
        parser.add_argument(
            "--wait", type=float, default=60.0, help="seconds to wait for the server"
        )
        parser.add_argument("--no-replay", action="store_true", help="only import and set up")

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        result = session_import_paths(paths=[SAMPLES_DIR])
        self._say(f"sample sessions: {samples_told(result)}")
        config_path = settings.KIROCREW_CONFIG_PATH
        if not config_path.exists() or not load_config(config_path).enabled:
            write_enabled(config_path, True)
            self._say("session summaries turned on in config.json")
        keys = [o.key for o in result.with_status("imported", "unchanged") if o.key]
        self._summarize(keys)
        login = self._login_lines(options["url"])
        if options["no_replay"]:
            self.stdout.write(login_box(login))
            return
        token = self._replay_token()
        self._clear_replay_slot()
        try:
            answered = wait_for_server(options["url"], options["wait"])
        except DemoError as exc:  # another program on that port: it never gets the token
            self.stdout.write(login_box(login))  # the password is still shown only now
            raise CommandError(f"skipped the replay: {exc}") from None
        # After the server's start-up banner, so the login is the last thing set up prints.
        self.stdout.write(login_box(login))
        if not answered:
            raise CommandError(f"no server answered at {options['url']}; skipped the replay")
        try:
            replay(DemoClient(options["url"], token), pause=options["pause"], say=self._say)
        except DemoError as exc:
            raise CommandError(f"the live replay stopped: {exc}") from None
        self._say(f"replay finished; the login is in the box above ({login[0]})")

    def _say(self, message: str) -> None:
        self.stdout.write(f"demo: {message}")

    def _summarize(self, keys: list[str]) -> None:
        names = Slot.objects.filter(session__key__in=keys).values_list("name", flat=True)
        written = 0
        for name in sorted(names):
            outcome = summary_generate(slot_name=name, force=True)
            written += outcome.reason is PassResult.STORED
        if written:
            self._say(f"{written} sample session{'s' if written != 1 else ''} summarized")

    def _replay_token(self) -> str:
        # A new token for the same app: re-creating the app would orphan the sessions it owns.
        if App.objects.filter(name=REPLAY_APP).exists():
            return app_token_rotate(name=REPLAY_APP)[1]
        return app_create(name=REPLAY_APP)[1]

    def _clear_replay_slot(self) -> None:
        # Whoever owns it now (even an older orphan).
        slot = Slot.objects.select_related("session").filter(name=REPLAY_SLOT).first()
        if slot is not None:
            session_delete(key=slot.session.key)

    def _login_lines(self, url: str) -> list[str]:
        dashboard = url.rstrip("/") + "/"
        users = get_user_model()
        if not users.objects.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(DEMO_USER, "demo@localhost", password)
            return [
                f"Dashboard: {dashboard}",
                f"Log in as: {DEMO_USER}",
                f"Password:  {password}",
                f"(shown once; `{CHANGE_PASSWORD}` sets a new one)",
            ]
        if users.objects.filter(username=DEMO_USER, is_superuser=True).exists():
            return [
                f"Dashboard: {dashboard}",
                f"Log in as: {DEMO_USER} (the password was shown on the first run;",
                f"`{CHANGE_PASSWORD}` sets a new one)",
            ]
        return [f"Dashboard: {dashboard}", "Log in with your superuser account."]


# What happened to each sample, in the words a person reads: every sample is in one part,
# so "0 imported, 3 unchanged" never leaves the fourth unexplained.
SAMPLE_WORDS = {
    "imported": "imported",
    "unchanged": "unchanged",
    "conflict": "left as they are (changed in the store since they were imported)",
    "bad": "skipped as unreadable",
}


def samples_told(result: ImportResult) -> str:
    counts = result.counts()
    parts = [
        f"{counts.get(status, 0)} {words}"
        for status, words in SAMPLE_WORDS.items()
        if counts.get(status, 0) or status in ("imported", "unchanged")
    ]
    named = [o.file.removesuffix(".jsonl") for o in result.with_status("conflict", "bad")]
    return ", ".join(parts) + (f": {', '.join(named)}" if named else "")
