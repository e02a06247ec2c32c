"""A whole new source session, read, converted, redacted and encoded in one go (pure).

The import runs this in worker processes for a run's new sources (everything CPU-bound
about a new session); the importer only writes the bytes, the database and the state. The
bytes are exactly those ``TranscriptStore.append_rows(key, rows, metadata=...)`` writes for
a new session: line 0, then every row checked by the content rule, redacted, in the
store's key order, stamped ``now``, ``now + 1µs``, … , each line within the line cap.
Anything but a clean new session answers None: the importer reads it itself and says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from ..codec import METADATA, encode_record
from ..content import MAX_TEXT_CHARS, check_content
from ..errors import RecordRejected
from ..fsutil import open_regular
from ..redaction import redact_text
from ..redaction.batch import all_unchanged
from ..store import redact_row, row_order
from ..timestamps import newest_activity
from ..user_turns import is_user_turn
from .source import (
    CONVERTERS,
    Batch,
    SourceState,
    convert_range,
    format_warning,
    has_conversation,
    head_lines,
    head_lines_of,
    key_refusal,
    new_state,
    read_range,
    session_key,
    session_metadata,
    source_format,
    state_after,
)

ONE_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Job:
    """What every file of one run shares (pickled with each file for its worker)."""

    fmt: str  # asked for: claude-code | codex | auto
    limit: int  # KIROCREW_IMPORT_MAX_BYTES
    max_bytes: int  # the store's rotation threshold: a bigger session takes the store's path
    max_line: int
    app_name: str | None
    clock: Callable[[], datetime]
    stamps: bool  # return every row's ts (--follow announces them)


@dataclass(slots=True)
class Prepared:
    path: Path
    blob: bytes  # line 0 and every row, as the store would write them
    metadata: dict[str, Any]  # line 0 as written
    state: SourceState  # the source's once this import is recorded (its key, its tally)
    row_count: int
    user_turns: int
    last_activity: datetime | None  # the newest record's source time (newest_activity)
    turn_ends: int
    warnings: list[str] = field(default_factory=list)
    stamps: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)


def prepare(path: Path, job: Job) -> Prepared | None:
    try:
        fd, st = open_regular(path)
    except OSError:
        return None
    try:
        if st.st_size > job.limit:
            return None
        data = read_range(fd, 0, st.st_size)  # read once for detection and conversion
        head = head_lines(fd, st.st_size) if data is None else head_lines_of(data)
        found, _ = source_format(head, job.fmt)
        if found not in CONVERTERS or (job.fmt != "auto" and found != job.fmt):
            return None
        state = new_state(found, path, st)
        batch = convert_range(fd, 0, st.st_size, found, state.conv, data)
        if batch.offset == 0 or not has_conversation(batch):
            return None  # no turn in it: the importer says why and stores nothing
        key = session_key(found, path, state.conv)
        if key_refusal(key) is not None:
            return None  # a name no file system takes: the importer reports why
        state = state_after(state, key, batch, fd, st, data)
    finally:
        os.close(fd)
    meta = session_metadata(state, path, batch.rows, job.app_name)
    try:
        prepared = encoded(path, state, batch, meta, job.clock(), job.max_line, job.stamps)
    except RecordRejected:
        return None
    return prepared if len(prepared.blob) <= job.max_bytes else None


def encoded(
    path: Path,
    state: SourceState,
    batch: Batch,
    meta: dict[str, Any],
    now: datetime,
    max_line: int,
    stamps: bool,
) -> Prepared:
    """A new session of ``batch``'s rows as the store writes it; ``RecordRejected`` for a
    row the store would refuse. ``stamps``: keep every row's ts and role (--follow)."""
    blob, line0, ts = encode_session(batch.rows, meta, now, max_line)
    return Prepared(
        path=path,
        blob=blob,
        metadata=line0,
        state=state,
        row_count=len(batch.rows),
        user_turns=sum(1 for row in batch.rows if is_user_turn(row)),
        last_activity=newest_activity(batch.rows, ts, agent=True),
        turn_ends=batch.turn_ends,
        warnings=format_warning(batch, state.format),
        stamps=ts if stamps else [],
        roles=[row["role"] for row in batch.rows] if stamps else [],
    )


def encode_session(
    rows: list[dict[str, Any]], metadata: dict[str, Any], now: datetime, max_line: int
) -> tuple[bytes, dict[str, Any], list[str]]:
    """(line 0 + rows as the store writes a new session, line 0's record, each row's ts)."""
    local = now.astimezone()
    line0 = {
        "_type": METADATA,
        "created_at": local.isoformat(),
        "last_consolidated": 0,
        **metadata,
    }
    parts = [encode_record(line0, max_line=max_line)]
    stamps = _stamps(local, len(rows))
    full = _extras_may_hold_secret(rows)  # then redact_row, meta and variants too
    settled = _contents_unchanged(rows) if not full else []
    dumps, newline = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    with_meta, bare, cap = _ROW_WITH_META, _ROW_BARE, MAX_TEXT_CHARS
    for number, row in enumerate(rows):
        role = row.get("role")
        if type(role) is not str and not isinstance(role, str):
            raise RecordRejected("a row needs a string role")
        keys = row.keys()
        # The converters' shapes (role, content and meta, or no meta): row_order's dict
        # built at once, and the content rule asked of the few values there are
        # (``_plainly_valid``'s tests, unrolled).
        if keys in (with_meta, bare) and type(content := row["content"]) is str:
            meta = row.get("meta")  # None in a bare row: _plain_meta's pass
            if (
                "\x00" in content
                or len(content) > cap
                or not _plain_text(role)
                or not _plain_meta(meta)
            ):
                check_content(row, what="row")  # decides, and says why
            ordered: dict[str, Any] = {"role": role, "content": content, "ts": stamps[number]}
            if keys == with_meta:
                ordered["meta"] = meta
        else:
            if "_type" in row:
                raise RecordRejected("a row may not carry _type")
            if not _plainly_valid(row):
                check_content(row, what="row")  # decides, and says why
            ordered = row_order(row)  # a new dict: stamped in place
            ordered["ts"] = stamps[number]
        if full:
            ordered, _ = redact_row(ordered)
        elif not settled[number]:  # a string content, not a user row's: meta cannot change
            ordered["content"] = redact_text(ordered["content"])[0]
        try:
            line = dumps(ordered, option=newline)  # encode_record's bytes
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise RecordRejected(f"record is not serializable as JSON: {exc}") from None
        if len(line) > max_line:
            encode_record(ordered, max_line=max_line)  # refuses it, and says why
        parts.append(line)
    return b"".join(parts), line0, stamps


def _stamps(local: datetime, count: int) -> list[str]:
    """``(local + n µs).isoformat()`` for n < count: only the microseconds change until
    the second turns, so the text is patched; 0 µs (isoformat leaves the fraction out)
    and the turn of a second take isoformat itself."""
    micro = local.microsecond
    base = local.isoformat()
    if not micro:
        head, tail = base[:19] + ".", base[19:]
    else:
        head, tail = base[:20], base[26:]
    return [
        f"{head}{micro + n:06d}{tail}"
        if 0 < micro + n < 1_000_000
        else (local + n * ONE_MICROSECOND).isoformat()
        for n in range(count)
    ]


CONTENT_CHUNK = 32  # rows whose contents are judged together: a secret costs its chunk


def _contents_unchanged(rows: list[dict[str, Any]]) -> list[bool]:
    """Per row, True when redaction leaves its content as it is: a user row (never
    redacted), or in a chunk whose contents ``all_unchanged`` clears at once."""
    flags = [row.get("role") == "user" or not isinstance(row.get("content"), str) for row in rows]
    for start in range(0, len(rows), CONTENT_CHUNK):
        chunk = range(start, min(start + CONTENT_CHUNK, len(rows)))
        texts = [rows[i]["content"] for i in chunk if not flags[i]]
        if texts and all_unchanged(texts):
            for i in chunk:
                flags[i] = True
    return flags


_ROW_WITH_META = frozenset({"role", "content", "meta"})  # compared with dict keys views
_ROW_BARE = frozenset({"role", "content"})
_SCALARS = (int, bool, float, type(None))


def _plain_text(text: str) -> bool:
    """The content rule's test of one string."""
    return "\x00" not in text and len(text) <= MAX_TEXT_CHARS


def _plain_meta(meta: Any) -> bool:
    """The content rule's test of a flat dict of strings and small scalars (or one such
    value); False means "not decided here"."""
    if type(meta) is not dict:
        return meta is None or type(meta) is bool or (type(meta) is str and _plain_text(meta))
    low, high = _INT_RANGE
    for k, v in meta.items():
        if type(k) is not str or "\x00" in k or len(k) > MAX_TEXT_CHARS:
            return False
        inner = type(v)
        if inner is str:
            if "\x00" in v or len(v) > MAX_TEXT_CHARS:
                return False
        elif inner is int:
            if not low <= v <= high:
                return False
        elif inner is not bool and v is not None:
            return False
    return True


def _extras_may_hold_secret(rows: list[dict[str, Any]]) -> bool:
    """Whether any redacted row's ``meta`` or ``variants`` may change: every string in
    them (keys too) judged at once (``all_unchanged``: one prefilter scan) instead of row
    by row, since real rows' meta (a timestamp, a tool-use id) trips the window trigger
    on its own. False: each row's redaction is its content's alone."""
    texts: list[str] = []
    keys: set[str] = set()  # meta's keys: the same few in every row
    add, more = texts.append, keys.update
    for row in rows:
        if row.get("role") == "user":
            continue
        meta = row.get("meta")
        if type(meta) is dict and "variants" not in row:
            # The converters' flat meta: its keys and string values, at once; anything
            # nested or unusual takes the general walk.
            more(meta)
            for value in meta.values():
                kind = type(value)
                if kind is str:
                    add(value)
                elif kind not in _SCALARS and not _strings_into(value, texts):
                    return True
            continue
        for name in ("meta", "variants"):
            if name in row and not _strings_into(row[name], texts):
                return True  # not plain JSON-shaped data: row by row, as redact_row does
    for key in keys:
        if type(key) is not str:
            return True  # as _strings_into: row by row
        add(key)
    return not all_unchanged(list(dict.fromkeys(texts)))  # keys and call ids repeat


def _strings_into(value: Any, texts: list[str]) -> bool:
    """Append every string of ``value`` (dict keys included) to ``texts``; False for
    anything but str/int/float/bool/None leaves in dicts and lists."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str:
            texts.append(node)
        elif kind is dict:
            for key, item in node.items():
                if type(key) is not str:
                    return False
                texts.append(key)
                stack.append(item)
        elif kind is list or kind is tuple:
            stack.extend(node)
        elif node is not None and kind not in (int, float, bool):
            return False
    return True


_INT_RANGE = (-(2**63), 2**64 - 1)  # what orjson can write (the rule's integer range)


def _plainly_valid(row: dict[str, Any]) -> bool:
    """True for a row the content rule accepts, in the converters' shape (strings, small
    scalars, one level of ``meta``): the rule's walk, unrolled (it runs per row). False
    means "not decided here": ``check_content`` decides, and says why."""
    flat: dict[Any, Any] = {}
    for key, value in row.items():
        if type(value) is dict:
            if type(key) is not str or not _plain_text(key) or not _plain_meta(value):
                return False
        else:
            flat[key] = value
    return _plain_meta(flat)
