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
