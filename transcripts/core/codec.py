"""The transcript format: one line is compact UTF-8 JSON and exactly one ``\\n``, at the end;
the record kinds a line can be, and which of them change an earlier row.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson

from .errors import RecordRejected

# A writer refuses a record whose encoded line is larger than this, before writing a
# byte; the reader reports longer lines as ``oversize`` without holding them in memory.
MAX_LINE_BYTES = 8 * 1024 * 1024


class RecordKind(StrEnum):
    """A line's ``_type``: what a record that is not a row is."""

    METADATA = "metadata"  # line 0 of a live file
    REVISION = "revision"  # a change to an earlier row
    ARCHIVE = "archive"  # line 0 of an archive


# The bare names, as the agent importer and the benches import them.
METADATA, REVISION, ARCHIVE = RecordKind.METADATA, RecordKind.REVISION, RecordKind.ARCHIVE
POSITION_HINT = "_after_ts"  # a revision patch key: place the target after this row ("" = first)
FORBIDDEN_PATCH_KEYS = ("ts", "_type")  # a revision never changes these
TARGET = "target_ts"  # a row-changing record's field naming the row it changes


def revision_record(target_ts: Any, patch: dict[str, Any], ts: str | None = None) -> dict[str, Any]:
    """A change to an earlier row: ``patch`` shallow-merged into the last earlier row whose
    ts is ``target_ts`` (the fold's rules); ``ts`` is stamped when it is appended. Keys in
    their order on disk."""
    return {"_type": RecordKind.REVISION, TARGET: target_ts, "patch": patch, "ts": ts}


# THE declaration of the record kinds that change an earlier row: ``_type`` -> the patch the
# record applies to the row named by its ``target_ts`` (validated and merged by the fold).
# Every path that must notice such a record derives from this one mapping: the fold, rewind
# (which keeps changes of kept rows) and rotation (which folds them into their rows).
ROW_CHANGES: dict[str, Callable[[dict[str, Any]], Any]] = {
    RecordKind.REVISION: lambda record: record.get("patch")
}


def new_metadata(now: datetime, fields: dict[str, Any]) -> dict[str, Any]:
    """Line 0 of a new transcript, stamped ``now``; ``fields`` come after (and may override)."""
    head = {"_type": RecordKind.METADATA, "created_at": now.astimezone().isoformat()}
    return {**head, "last_consolidated": 0, **fields}


def generation(metadata: dict[str, Any] | None) -> int:
    """Line 0's ``rotation_generation`` (``gen``); absent or unusable reads as 0."""
    try:
        return int((metadata or {}).get("rotation_generation") or 0)
    except (TypeError, ValueError):
        return 0


def encode_record(record: dict[str, Any], *, max_line: int = MAX_LINE_BYTES) -> bytes:
    """Serialize one record as a complete line; never produces a raw newline inside it."""
    try:
        line = orjson.dumps(record) + b"\n"
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise RecordRejected(f"record is not serializable as JSON: {exc}") from None
    if len(line) > max_line:
        raise RecordRejected(
            f"record is {len(line)} bytes; the maximum line size is {max_line} bytes"
        )
    return line
