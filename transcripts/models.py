"""The database mirror of the transcript store.

The JSONL files are the truth; ``Session`` is an index over them that ``import_transcripts``
can always rebuild. ``App`` and ``Slot`` hold what the files do not: API credentials,
ownership of the live handle a URL names, and turn state.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from .core.provenance import KIROCREW, SOURCE_CHOICES


class App(models.Model):
    """An API client. Only a hash of its token is stored; the token is shown once."""

    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True, help_text="sha256 hex of the token")
    token_prefix = models.CharField(max_length=8, help_text="first characters, for display")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class Session(models.Model):
    """One transcript: identity and folded counts of its whole session (archives + file)."""

    key = models.CharField(max_length=255, unique=True)
    safe_key = models.CharField(max_length=255, db_index=True)
    app = models.ForeignKey(
        App,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,  # an unscoped session is closed to every app
        related_name="sessions",
    )
    title = models.TextField(blank=True, default="")
    memory_mode = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    last_activity = models.DateTimeField(null=True, blank=True, help_text="newest row ts")
    sig = models.BigIntegerField(default=0, help_text="st_mtime_ns of the transcript")
    gen = models.IntegerField(default=0, help_text="rotation_generation of line 0")
    row_count = models.PositiveIntegerField(default=0)
    user_turns = models.PositiveIntegerField(default=0)
    size = models.BigIntegerField(default=0, help_text="bytes of the current file")
    closed = models.BooleanField(default=False)
    pinned = models.BooleanField(default=False)
    anomaly_counts = models.JSONField(default=dict, blank=True)
    # Where the session came from and its project path, from line 0 (core/provenance.py).
    source = models.CharField(max_length=16, choices=SOURCE_CHOICES, default=KIROCREW)
    project = models.TextField(blank=True, default="", help_text="cwd or project path")
    # The file as last read, for incremental import (a matching stat means unchanged).
    file_mtime_ns = models.BigIntegerField(null=True, blank=True)
    file_size = models.BigIntegerField(null=True, blank=True)
    file_inode = models.BigIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = (models.F("last_activity").desc(nulls_last=True), "-created_at")
        # The list's keyset order (transcripts/listing.py): a page is an index range scan.
        indexes = [
            models.Index(fields=["-last_activity", "-id"], name="session_activity_id_idx"),
            models.Index(
                fields=["app", "-last_activity", "-id"], name="session_app_activity_id_idx"
            ),
            # The list filtered by source keeps the keyset order's index range scan.
            models.Index(
                fields=["source", "-last_activity", "-id"], name="session_src_activity_id_idx"
            ),
        ]
        # Destructive routes for dashboard users: staff, or delete_session / rewind_session;
        # rotate_session: the admin's "Rotate (forced)" (cleanup_archives deletes its rows).
        permissions = [
            ("rewind_session", "Can rewind a session (drop rows after a point)"),
            ("rotate_session", "Can force a rotation (archive a session's older rows)"),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.key})" if self.title else self.key


class Slot(models.Model):
    """The live handle a URL names (slot ``s1`` → transcript ``dashboard:s1``)."""

    name = models.CharField(max_length=128, unique=True)
    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="slot")
    app = models.ForeignKey(
        App, null=True, blank=True, on_delete=models.SET_NULL, related_name="slots"
    )
    running = models.BooleanField(default=False)
    last_stop_reason = models.CharField(max_length=64, blank=True, default="")
    # A write for the slot is between "accepted" and "on disk and mirrored" until then
    # (services/dirty.py): a lease, not a flag, so a writer killed mid-write cannot
    # leave the slot dirty (and every summary pass refused) forever.
    dirty_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name

    @property
    def dirty(self) -> bool:
        """A write holds the slot's unexpired dirty lease (as of this row's last read)."""
        return self.dirty_until is not None and self.dirty_until > timezone.now()


class SecurityEvent(models.Model):
    """Audit of a denial or probe (a foreign or missing slot…); never carries a secret.
    One row per (caller, operation, outcome, source, resource, error) and time window,
    ``count`` times (``services/security.py``), so probes cannot grow it without bound."""

    caller = models.CharField(max_length=200, blank=True, default="")
    operation = models.CharField(max_length=100)
    outcome = models.CharField(max_length=32, default="denied")
    source = models.CharField(max_length=200, blank=True, default="")
    resource = models.CharField(max_length=300, blank=True, default="")
    error = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, help_text="first occurrence")
    last_seen_at = models.DateTimeField(default=timezone.now, help_text="latest occurrence")
    window_start = models.DateTimeField(default=timezone.now)
    count = models.PositiveIntegerField(default=1)
    # sha256 of the aggregation key (the fields above and window_start): the upsert target.
    fingerprint = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ("-created_at",)
        indexes = [
            models.Index(fields=["-created_at"], name="security_event_time_idx"),
            models.Index(fields=["caller", "window_start"], name="security_event_window_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.outcome} by {self.caller or '?'} on {self.resource or '-'}"
