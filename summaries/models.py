"""Mirrors of the summary sidecars, for listing and the admin. The files stay the truth."""

from __future__ import annotations

from django.db import models


class IntentSummary(models.Model):
    session = models.OneToOneField(
        "transcripts.Session", on_delete=models.CASCADE, related_name="intent_summary"
    )
    payload = models.JSONField(default=dict)  # {"intents": [...], "constraints": [...]}
    sig = models.BigIntegerField()
    gen = models.IntegerField()
    generated_at = models.DateTimeField()
    user_turns = models.IntegerField(default=0)
    last_activity = models.CharField(max_length=64, blank=True)
    model = models.CharField(max_length=200, blank=True)
    duration_ms = models.IntegerField(default=0)
    intent_count = models.IntegerField(default=0)
    # The panel's states of the intents, most recently touched first ("done,needs-you").
    states = models.CharField(max_length=400, blank=True)

    class Meta:
        verbose_name = "intent summary"
        verbose_name_plural = "intent summaries"
        # The admin's "Summarize now": a forced model pass (it may cost money).
        permissions = [("generate_intentsummary", "Can summarize a session now (a forced pass)")]

    def __str__(self) -> str:
        return f"{self.session.key}: {self.intent_count} intents"


class OneLineSummary(models.Model):
    session = models.OneToOneField(
        "transcripts.Session", on_delete=models.CASCADE, related_name="one_line_summary"
    )
    summary = models.CharField(max_length=400)
    sig = models.BigIntegerField()
    gen = models.IntegerField()
    generated_at = models.DateTimeField()

    class Meta:
        verbose_name = "one-line summary"
        verbose_name_plural = "one-line summaries"

    def __str__(self) -> str:
        return self.summary


class SummaryState(models.Model):
    """Summaries' own state of a slot, created on first need (``summaries/state.py``)."""

    # No database constraint: Django cascades in Python (collect, then delete), so on
    # PostgreSQL a pass creating the row in between failed the slot's DELETE with a
    # foreign-key violation. Without it the delete wins; such a late row is reaped on
    # ``session_deleted``, and a slot id is never reused, so it is never misread.
    slot = models.OneToOneField(
        "transcripts.Slot",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="summary_state",
        db_constraint=False,
    )
    # The user turns the stored summary covers: the gate's cadence counts from here.
    turn_mark = models.PositiveIntegerField(default=0)
    # The "generating" flag (display only, ``summaries/state.py``); it expires, so a pass
    # killed before clearing it shows "generating" for a bounded time.
    in_flight_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "summary state"
        verbose_name_plural = "summary states"

    def __str__(self) -> str:
        return f"slot {self.slot_id}: mark {self.turn_mark}"
