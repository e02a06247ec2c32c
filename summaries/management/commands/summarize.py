"""One summary pass for one slot, on request (the Summarize button's command-line twin)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from summaries.core.gate import PassResult
from summaries.envconfig import ENV_ENABLED
from summaries.services import summary_generate
from transcripts.management.migrated import ensure_migrated

# What each outcome means for the person who asked, and what they can do about it.
DONE = {
    PassResult.STORED: "summary written",
    PassResult.CURRENT: "summary already up to date with the transcript (nothing new to summarize)",
}
HINTS = {
    PassResult.DISABLED: (
        'session summaries are off; turn them on with {"session_summary": {"enabled": true}} '
        f"in config.json, {ENV_ENABLED}=1, or the dashboard's Settings page"
    ),
    PassResult.TOO_FEW_TURNS: (
        "the session has too few user turns yet (session_summary.min_user_turns)"
    ),
    PassResult.SLOT_NOT_FOUND: "no slot with that name",
    PassResult.RUNNING: "a turn is in progress; run it again once the turn has ended",
    PassResult.IN_FLIGHT: "another summary pass is running for this slot",
    PassResult.BACKEND_ERROR: (
        "the summary model failed; check KIROCREW_SUMMARY_MODEL and that its server or CLI works"
    ),
    PassResult.UNUSABLE_REPLY: "the model answered, but not with a usable summary",
    PassResult.WRITE_REFUSED: "the session changed while it was being summarized; run it again",
    PassResult.ERROR: "an unexpected error; the server log has its traceback",
}


class Command(BaseCommand):
    help = (
        "Run one forced summary pass for SLOT: forced lifts the stop-reason and cadence rules, "
        "not the others. Exit 0 when a summary was written or is already current, 1 with the "
        "reason otherwise. Example: manage.py summarize research-notes"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slot", help="the slot name, e.g. research-notes")

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_migrated()
        slot: str = options["slot"]
        outcome = summary_generate(slot_name=slot, force=True)
        if outcome.ok:
            text = DONE[outcome.reason]
            self.stdout.write(self.style.SUCCESS(f"{slot}: {outcome.label}: {text}"))
            return
        hint = HINTS.get(outcome.reason)
        # The reason itself (the backend's message, written safe to show), then the hint.
        why = f": {outcome.note}" if outcome.note else ""
        self.stderr.write(
            f"{slot}: not summarized: {outcome.label}{why}" + (f" ({hint})" if hint else "")
        )
        raise SystemExit(1)
