"""The one Django binding of the pure store: a ``TranscriptStore`` built from settings."""

from __future__ import annotations

import functools
from pathlib import Path

from django.conf import settings

from .core.store import TranscriptStore


def get_store() -> TranscriptStore:
    """The store for the current settings (cached per distinct settings, so overrides apply)."""
    return _store(
        Path(settings.KIROCREW_SESSIONS_DIR),
        str(settings.TRANSCRIPT_FSYNC),
        int(settings.TRANSCRIPT_MAX_BYTES),
        int(settings.TRANSCRIPT_KEEP_LINES),
    )


@functools.lru_cache(maxsize=16)
def _store(root: Path, fsync: str, max_bytes: int, keep_lines: int) -> TranscriptStore:
    return TranscriptStore(root, fsync=fsync, max_bytes=max_bytes, keep_lines=keep_lines)
