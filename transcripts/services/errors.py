"""Errors the services raise for callers to map (the API answers each with a code)."""

from __future__ import annotations


class ServiceError(Exception):
    """Base class of the errors below."""


class InvalidSlotName(ServiceError, ValueError):
    """A slot name outside ``[A-Za-z0-9][A-Za-z0-9._:-]{0,127}`` (or containing ``..``)."""


class SlotExists(ServiceError):
    """A slot of that name, or a transcript for its key, already exists."""


class AppNameInvalid(ServiceError, ValueError):
    """An app name that is empty, too long or holds control characters."""


class AppExists(ServiceError):
    """An app of that name already exists."""


class ImportSourceError(ServiceError, ValueError):
    """An import path that is neither a directory nor a ``.jsonl`` file."""


class TurnRunning(ServiceError):
    """A turn is running on this slot: a second turn start, or a rewind, is refused."""
