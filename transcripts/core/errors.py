"""Typed errors of the transcript store. Content never raises on read; only I/O does."""

from __future__ import annotations


class TranscriptError(Exception):
    """Base class for every store error."""


class TranscriptWriteError(TranscriptError):
    """A write failed part-way (ENOSPC, EFBIG, EIO…); the file was truncated back."""

    def __init__(self, path: str, errno: int | None, message: str) -> None:
        super().__init__(f"{message} ({path}, errno {errno})")
        self.path = path
        self.errno = errno


class RecordRejected(TranscriptError, ValueError):
    """A writer refused a record before writing a byte (too large, not serializable…)."""


class RevisionRejected(RecordRejected):
    """A revision patch that may not be applied (empty, changes ts or _type…)."""


class RowNotFound(TranscriptError, LookupError):
    """No row with the given ts in the session's current file."""


class SessionNotFound(TranscriptError, LookupError):
    """No transcript file for the key."""


class SessionExists(TranscriptError):
    """A create for a key whose transcript already exists."""


class LockTimeout(TranscriptError):
    """The cross-process lock could not be taken in time; nothing was written."""


class ArchiveError(TranscriptError):
    """An archive could not be written; the rewrite that needed it did not happen."""
