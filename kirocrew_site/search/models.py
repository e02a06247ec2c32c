"""The index's rows. The engine-side index (FTS5 table / tsvector + GIN) is created by the
migration for the vendor in use; ``selectors.py`` is the only code that queries it."""

from __future__ import annotations

from django.db import models

from transcripts.models import Session


class DocKind(models.TextChoices):
    ROW = "row", "Transcript"
    SUMMARY = "summary", "Summary"


class SearchDoc(models.Model):
    """One chunk of searchable text: part of a row, or part of the stored summary."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=DocKind.choices)
    seq = models.IntegerField(help_text="the row's position in the session (rows only)")
    cursor = models.CharField(max_length=100, blank=True, help_text="the row's ts")
    turn = models.IntegerField(default=0, help_text="the user turn it belongs to (0: none)")
    role = models.CharField(max_length=64, blank=True)
    text = models.TextField()

    class Meta:
        indexes = [
            models.Index(fields=["session", "kind", "seq"], name="searchdoc_session_seq_idx")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.session_id}#{self.seq}"


class SearchMark(models.Model):
    """How far a session's rows are indexed: reads continue after ``cursor``."""

    session = models.OneToOneField(
        Session, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    cursor = models.CharField(max_length=100, blank=True, help_text='"": nothing indexed yet')
    rows = models.IntegerField(default=0, help_text="rows read so far (the next seq)")
    turns = models.IntegerField(default=0, help_text="user turns through the last row read")

    def __str__(self) -> str:
        return f"{self.session_id} after {self.cursor or '-'}"
