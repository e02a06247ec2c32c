"""The login throttle's counters: one row per (username, client address) that failed."""

from __future__ import annotations

from django.db import models


class LoginThrottle(models.Model):
    """Attempts in the window that started at ``window_start``: in the database, so every
    process sees the same count. ``key`` is a hash: no username or address is stored."""

    key = models.CharField(max_length=64, unique=True)
    attempts = models.PositiveIntegerField(default=0)
    window_start = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key[:12]}… {self.attempts} since {self.window_start:%Y-%m-%d %H:%M:%S}"
