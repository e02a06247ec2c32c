"""Writes. Every transcript write updates its ``Session`` row in the same call.

Functions are keyword-only and named ``<entity>_<action>``; import them from here.
"""

from __future__ import annotations

from .apps import app_authenticate, app_create, app_token_rotate
from .errors import (
    AppExists,
    AppNameInvalid,
    ImportSourceError,
    InvalidSlotName,
    SlotExists,
    TurnRunning,
)
from .importing import FileOutcome, ImportResult, session_import_paths, session_index
from .maintenance import archive_cleanup, session_rotate_all
from .security import security_event_record
from .sessions import (
    session_append_revision,
    session_append_row,
    session_append_rows,
    session_create,
    session_delete,
    session_fork,
    session_rewind,
    session_rotate,
    session_set_title,
    session_update_metadata,
)
from .sync import session_sync
from .turn_loop import slot_append_revision, slot_append_row, slot_turn_end, slot_turn_start
from .verify import Finding, session_verify, session_verify_all

__all__ = [
    "AppExists",
    "AppNameInvalid",
    "FileOutcome",
    "Finding",
    "ImportResult",
    "ImportSourceError",
    "InvalidSlotName",
    "SlotExists",
    "TurnRunning",
    "app_authenticate",
    "app_create",
    "app_token_rotate",
    "archive_cleanup",
    "security_event_record",
    "session_append_revision",
    "session_append_row",
    "session_append_rows",
    "session_create",
    "session_delete",
    "session_fork",
    "session_import_paths",
    "session_index",
    "session_rewind",
    "session_rotate",
    "session_rotate_all",
    "session_set_title",
    "session_sync",
    "session_update_metadata",
    "session_verify",
    "session_verify_all",
    "slot_append_revision",
    "slot_append_row",
    "slot_turn_end",
    "slot_turn_start",
]
