"""Import sessions directories into the store and index them (idempotent, incremental)."""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from transcripts import signals
from transcripts.management.migrated import ensure_migrated
from transcripts.models import App
from transcripts.services import (
    FileOutcome,
    ImportResult,
    ImportSourceError,
    session_import_paths,
)
from transcripts.services.agent_import import agent_import_paths, import_format_default

# --follow polls every source folder this often (seconds); a record lands in the store
# within about one interval of being written (two at worst).
FOLLOW_INTERVAL_S = 1.0
# No session file under any PATH: say where sessions usually are, not just 0.
NO_AGENT_SESSIONS = (
    "No *.jsonl session files there. Claude Code keeps them under "
    "~/.claude/projects, Codex CLI under ~/.codex/sessions."
)
NO_TRANSCRIPTS = (
    "No Kiro Crew transcripts there (*.jsonl). For Claude Code or Codex CLI "
    "sessions add --format claude-code, codex or auto."
)


class Command(BaseCommand):
    help = (
        "Import transcripts: copy each PATH's *.jsonl and archive/*.jsonl into the store "
        "(never over a different file) and index them; no PATH indexes the store in place. "
        "Only regular files are read (links, FIFOs, sockets and devices are skipped), each "
        "at most KIROCREW_IMPORT_MAX_BYTES (default 512 MiB); archive/ files only together "
        "with their own new session file. Exit 1 when a file was skipped (the rest is "
        "imported). --format claude-code|codex|auto converts other agents' sessions (read "
        "only, incrementally by byte offset); --follow keeps polling. Example: manage.py "
        "import_transcripts ~/.kiro/crew/sessions --dry-run"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
        parser.add_argument("--app", default="", help="owner of sessions this run creates")
        parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
        parser.add_argument(
            "--format",
            default=None,
            choices=("kirocrew", "claude-code", "codex", "auto"),
            help="source format: Claude Code (~/.claude/projects) and Codex CLI "
            "(~/.codex/sessions) sessions are converted; auto detects each file's format "
            "(the default when a PATH holds Claude Code or Codex sessions, else kirocrew)",
        )
        parser.add_argument(
            "--follow",
            action="store_true",
            help="keep polling PATHs and import records as they are appended (Ctrl-C stops)",
        )
        parser.add_argument(
            "--interval", type=float, default=FOLLOW_INTERVAL_S, help="--follow poll interval (s)"
        )
        parser.add_argument("--polls", type=int, default=0, help="--follow: stop after N polls")

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        interrupted = True  # until the run returns or raises on its own
        try:
            interrupted = self._run(options)  # True: --follow stopped by Ctrl-C
        except KeyboardInterrupt:
            self.stderr.write("Interrupted.")
            raise SystemExit(130) from None
        except CommandError:
            interrupted = False
            raise
        finally:
            # Work this run's turn ends queued in this process (summary passes) finishes
            # before the command returns, or stops at once after Ctrl-C; a Ctrl-C while
            # it runs stops it and ends the command the same way (its receivers re-raise).
            try:
                signals.import_finished.send_robust(sender=self.__class__, interrupted=interrupted)
            except KeyboardInterrupt:
                self.stderr.write("Interrupted.")
                raise SystemExit(130) from None

    def _run(self, options: dict[str, Any]) -> bool:
        verbosity: int = options["verbosity"]
        owner = None
        if options["app"]:
            owner = App.objects.filter(name=options["app"]).first()
            if owner is None:
                raise CommandError(f"no app named {options['app']!r} (create_app NAME first)")
        self._bar: tqdm[Any] | None = None
        self._dry_run: bool = options["dry_run"]
        use_bar = verbosity >= 1 and sys.stderr.isatty()
        if options["format"] is None:
            options["format"] = import_format_default(options["paths"])
            if options["format"] == "auto" and verbosity >= 1:
                self.stdout.write(
                    "Claude Code or Codex CLI sessions found: converting them (--format auto)"
                )
        if options["format"] != "kirocrew" or options["follow"]:
            return self._agents(options, owner, verbosity)
        try:
            result = session_import_paths(
                paths=options["paths"],
                app=owner,
                dry_run=options["dry_run"],
                progress=partial(self._progress, verbosity=verbosity, use_bar=use_bar),
            )
        except ImportSourceError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if self._bar is not None:
                self._bar.close()
        if verbosity >= 1:
            self._report(result, verbosity)
            if not result.outcomes and options["paths"]:
                self.stderr.write(NO_TRANSCRIPTS, self.style.WARNING)
        counts = result.counts()
        if counts["bad"] or counts["conflict"]:  # the rest was imported; the exit says so
            raise CommandError(
                f"{counts['bad'] + counts['conflict']} files skipped "
                f"(bad {counts['bad']}, conflicts {counts['conflict']})",
                returncode=1,
            )
        return False

    def _agents(self, options: dict[str, Any], owner: App | None, verbosity: int) -> bool:
        """Convert other agents' sessions; with --follow, poll until stopped (True when
        Ctrl-C stopped it)."""
        if not options["paths"]:
            raise CommandError(
                "--format claude-code|codex|auto and --follow need a PATH", returncode=2
            )
        if options["follow"] and options["dry_run"]:
            raise CommandError("--follow cannot be a --dry-run", returncode=2)
        if options["interval"] <= 0:
            raise CommandError("--interval must be positive", returncode=2)
        fmt = "auto" if options["format"] == "kirocrew" else options["format"]
        polls, bad = 0, 0
        reported: set[tuple[str, str]] = set()
        if options["follow"] and verbosity >= 1:
            count = len(options["paths"])
            self.stdout.write(
                f"Following {count} folder{'s' if count != 1 else ''} every "
                f"{options['interval']:g} s (Ctrl-C stops)"
            )
        try:
            while True:
                try:
                    result = agent_import_paths(
                        paths=options["paths"],
                        fmt=fmt,
                        app=owner,
                        dry_run=options["dry_run"],
                        announce=options["follow"],
                    )
                except ImportSourceError as exc:
                    raise CommandError(str(exc)) from exc
                polls += 1
                counts = result.counts()
                bad = counts["bad"] + counts["conflict"]
                # Under --follow a poll that only repeats the last one's problems stays quiet.
                problems = {(o.file, o.reason) for o in result.with_status("bad", "conflict")}
                fresh = not options["follow"] or counts["imported"] or problems - reported
                reported |= problems
                if verbosity >= 1 and fresh:
                    self._report_agents(result, verbosity)
                if verbosity >= 1 and polls == 1 and not result.outcomes:
                    self.stderr.write(NO_AGENT_SESSIONS, self.style.WARNING)
                if not options["follow"] or polls == options["polls"]:
                    break
                time.sleep(options["interval"])
        except KeyboardInterrupt:
            if not options["follow"]:
                raise  # a one-off run cut short: the caller says so
            # --follow ends only this way: what was imported stays, and the exit is clean.
            return True
        if bad:
            raise CommandError(f"{bad} files skipped", returncode=1)
        return False

    def _report_agents(self, result: ImportResult, verbosity: int) -> None:
        for outcome in result.outcomes:
            if outcome.status == "imported" or outcome.status == "bad" or verbosity >= 2:
                # The tally of every source record (imported, dropped:<rule>, unknown:<type>).
                records = dict(outcome.anomalies)
                text = describe(replace(outcome, anomalies={}), dry_run=result.dry_run)
                if records:
                    text += " (records: " + ", ".join(f"{k}={v}" for k, v in records.items()) + ")"
                self.stdout.write(f"{outcome.file}: {text}")
        self._totals(result)

    def _report(self, result: ImportResult, verbosity: int) -> None:
        for outcome in result.with_status("copied", "present", "conflict"):
            if outcome.status == "conflict" or verbosity >= 2:
                text = describe(outcome, dry_run=result.dry_run)
                self.stdout.write(f"{outcome.file}: {text}")
        counts = result.counts()
        self._totals(
            result,
            f", conflicts {counts['conflict']}; "
            f"archives copied {counts['copied']}, already present {counts['present']}",
        )
        for title, status in (("Bad files (skipped)", "bad"), ("Conflicts (skipped)", "conflict")):
            listed = result.with_status(status)
            if listed:
                self.stdout.write(f"{title}:", self.style.WARNING)
                for outcome in listed:
                    self.stdout.write(f"  {outcome.file}: {outcome.reason}")

    def _totals(self, result: ImportResult, more: str = "") -> None:
        counts = result.counts()
        prefix = "Dry run, nothing changed. Would import" if result.dry_run else "Imported"
        self.stdout.write(
            f"{prefix} {counts['imported']}, unchanged {counts['unchanged']}, "
            f"bad {counts['bad']}{more}",
            self.style.SUCCESS,
        )

    def _progress(
        self, done: int, total: int, outcome: FileOutcome, verbosity: int, use_bar: bool
    ) -> None:
        if use_bar and self._bar is None:
            self._bar = tqdm(total=total, unit="file", file=sys.stderr, leave=False)
        if verbosity >= 2 or (verbosity >= 1 and outcome.status != "unchanged"):
            with tqdm.external_write_mode(file=sys.stderr) if self._bar else nullcontext():
                text = describe(outcome, dry_run=self._dry_run)
                self.stdout.write(f"[{done}/{total}] {outcome.file}: {text}")
        if self._bar is not None:
            self._bar.update(1)


DRY_RUN_WORDS = {"imported": "would import", "copied": "would copy"}


def describe(outcome: FileOutcome, *, dry_run: bool = False) -> str:
    text = DRY_RUN_WORDS.get(outcome.status, outcome.status) if dry_run else outcome.status
    if outcome.status == "present":
        text = "already present"
    if outcome.key and outcome.status not in ("bad", "conflict"):
        text += f" {outcome.key}"
    if outcome.reason:
        text += f": {outcome.reason}"
    if outcome.anomalies:
        text += " (anomalies: " + ", ".join(f"{k}={v}" for k, v in outcome.anomalies.items()) + ")"
    for warning in outcome.warnings:
        text += f"; warning: {warning}"
    return text
