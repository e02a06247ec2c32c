"""The transcript format: one line is compact UTF-8 JSON and exactly one ``\\n``, at the end;
the record kinds a line can be, and which of them change an earlier row.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from .errors import RecordRejected

# A writer refuses a record whose encoded line is larger than this, before writing a
# byte; the reader reports longer lines as ``oversize`` without holding them in memory.
MAX_LINE_BYTES = 8 * 1024 * 1024

METADATA = "metadata"
REVISION = "revision"
ARCHIVE = "archive"
POSITION_HINT = "_after_ts"  # a revision patch key: place the target after this row ("" = first)
FORBIDDEN_PATCH_KEYS = ("ts", "_type")  # a revision never changes these
TARGET = "target_ts"  # a row-changing record's field naming the row it changes


def _revision_patch(record: dict[str, Any]) -> Any:
    return record.get("patch")


# THE declaration of the record kinds that change an earlier row: ``_type`` -> the patch the
# record applies to the row named by its ``target_ts`` (validated and merged by the fold).
# Every path that must notice such a record derives from this one mapping: the fold, the
# fast path that skips the fold when a file holds none (``may_change_rows``), rewind
# (which keeps changes of kept rows) and rotation (which folds them into their rows).
ROW_CHANGES: dict[str, Callable[[dict[str, Any]], Any]] = {REVISION: _revision_patch}

_marks: dict[tuple[str, ...], re.Pattern[bytes]] = {}


def _change_mark() -> re.Pattern[bytes]:
    """The ``"_type":"<kind>"`` of any declared kind, with any JSON spacing (this store
    writes orjson's compact form, the original's stdlib writer ``": "``). One regex pass
    (its literal prefix is searched in C) costs about a third of two ``bytes.find`` calls on
    transcript text, whose many '"' defeat find's skip table."""
    kinds = tuple(ROW_CHANGES)
    mark = _marks.get(kinds)
    if mark is None:
        alternatives = b"|".join(re.escape(kind.encode()) for kind in kinds)
        mark = _marks[kinds] = re.compile(rb'"_type"\s*:\s*"(?:' + alternatives + rb')"')
    return mark


def may_change_rows(data: bytes) -> bool:
    """Whether ``data`` (lines of a transcript file) may hold a row-changing record.

    A conservative substring test: False means the fold of these lines is the identity
    (every row as written, in file order); True may also be a row's text quoting one.
    """
    return _change_mark().search(data) is not None


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
