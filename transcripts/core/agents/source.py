"""One source session file, read and converted (pure: the importer's edges own the writes).

Shared by the importer (``services/agent_import.py``) and its worker processes
(``prepare.py``), so both detect, read, key, fingerprint and describe a source exactly the
same way. Lines are read from a byte offset; a line without its newline may be half
written by the agent and waits for the next run, so it is never half-imported.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from ..keys import safe_key
from . import claude_code, codex
from .common import (
    FOREIGN,
    REDACTED_TAG,
    UNKNOWN,
    ConvState,
    Step,
    Tally,
    clean_text,
    digest,
    digest_bytes,
    redacted,
)

CONVERTERS: dict[str, Callable[[Any, ConvState], Step]] = {
    "claude-code": claude_code.convert,
    "codex": codex.convert,
}
HEAD_LINES = 20  # what format detection reads
CLAUDE_BOOKKEEPING = frozenset({"file-history-snapshot", "queue-operation", "summary"})
BLOCK = 4 * 1024 * 1024  # lines are read in blocks, never the whole file
TAIL_BYTES = 4096  # what a state's fingerprint digests: the bytes just before its offset
CRC_CHUNK = 1 << 20


def detect_lines(lines: list[bytes]) -> str | None:
    """``claude-code`` | ``codex`` | ``codex-legacy`` | ``kirocrew`` | None (unknown).

    Records are parsed only as far as the answer needs (a Claude session is known from
    its first record, almost always): the first ``HEAD_LINES`` lines bound the look.
    """
    records = _records(lines[:HEAD_LINES])
    first = next(records, None)
    if first is None:
        return None
    if first.get("_type") == "metadata" or ("role" in first and "ts" in first):
        return "kirocrew"
    if "payload" in first and first.get("type") == "session_meta":
        return "codex"
    if "session" in first and "items" in first:
        return "codex-legacy"
    if "id" in first and "timestamp" in first and "type" not in first:
        return "codex-legacy"
    if _claude(first):
        return "claude-code"
    seen = [first]
    for record in records:
        if _claude(record):
            return "claude-code"
        seen.append(record)
    if all("payload" not in r and _bookkeeping(r.get("type")) for r in seen):
        return "claude-code"  # a session that so far holds only snapshots and queue lines
    if "payload" in first and "type" in first:
        return "codex"
    return None


def _bookkeeping(kind: Any) -> bool:
    return isinstance(kind, str) and kind in CLAUDE_BOOKKEEPING  # a list would not hash


def _claude(record: dict[str, Any]) -> bool:
    return "payload" not in record and ("sessionId" in record or "uuid" in record)


def _records(lines: list[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def complete_lines(fd: int, offset: int, end: int) -> Iterator[tuple[bytes, int]]:
    """(line without its newline, offset just past it) for each whole line in [offset, end)."""
    # Only each new block is searched for a long line's newline, then the line is read
    # again whole: a torn line of n bytes costs one read and O(BLOCK) memory per run
    # (joining it to each block and searching the whole again cost O(n^2 / BLOCK)).
    start = pos = offset  # start: where the line not yet yielded begins
    while pos < end:
        block = os.pread(fd, min(BLOCK, end - pos), pos)
        if not block:
            break
        cut = 0
        if start < pos:  # a line begun in an earlier block
            nl = block.find(b"\n")
            if nl < 0:
                pos += len(block)
                continue
            line = os.pread(fd, pos + nl - start, start)
            if len(line) != pos + nl - start:
                return  # the file shrank under the read: the rest waits for the next run
            yield line, pos + nl + 1
            cut = nl + 1
        while (nl := block.find(b"\n", cut)) >= 0:
            yield block[cut:nl], pos + nl + 1
            cut = nl + 1
        start = pos + cut
        pos += len(block)


def tail_digest(fd: int, offset: int, data: bytes | None = None) -> str:
    """Digest of the bytes [offset - TAIL_BYTES, offset): a re-run whose stat moved
    compares it before reading on, so a rewrite, a re-created file on a reused inode or a
    regrowth is not read mid-stream. ``data``: the file's bytes from 0 when already read."""
    start = max(0, offset - TAIL_BYTES)
    if data is not None and len(data) >= offset:
        return digest_bytes(data[start:offset])
    return digest_bytes(os.pread(fd, offset - start, start))


def prefix_crc(fd: int, start: int, end: int, crc: int = 0, data: bytes | None = None) -> int:
    """CRC-32 of the bytes [0, end), continued from ``crc`` (that of [0, start)), so a
    state's covers every byte it read; it catches a same-size rewrite the 4 KiB tail
    misses. Change detection, not a defence: CRC-32 runs at ~3.7 GB/s here (60 ms CPU for
    the bench's 210 MB), SHA-256 at half that."""
    if data is not None and len(data) >= end:
        return zlib.crc32(memoryview(data)[start:end], crc)
    while start < end:
        chunk = os.pread(fd, min(CRC_CHUNK, end - start), start)
        if not chunk:
            break
        crc = zlib.crc32(chunk, crc)
        start += len(chunk)
    return crc


@dataclass(slots=True)
class SourceState:
    """One source: its identity, how far it was read, and the fingerprint of those bytes
    (``tail_digest``, ``prefix_crc``; None in a state written before fingerprints). Stored
    in ``.agent-imports/`` with orjson: the field names are the keys states always had."""

    format: str
    dev: int
    ino: int
    conv: ConvState
    offset: int = 0
    key: str = ""  # empty until the session is written
    tally: dict[str, int] = field(default_factory=dict)  # every record so far, per bucket
    mtime_ns: int | None = None
    tail: str | None = None
    crc: int | None = None


@dataclass(slots=True)
class Pending:
    """A batch written ahead: the state it leads to, and the session file as it was
    before it (no file yet: size 0, no inode). Removed once the state is recorded."""

    next: SourceState
    store_size: int
    store_ino: int | None
    ended: bool  # the batch ended a turn


@dataclass(slots=True)
class Batch:
    rows: list[dict[str, Any]] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    turn_ends: int = 0
    offset: int = 0
    foreign_at: int = 0  # first line number of another format (the format changed mid-way)


def head_lines(fd: int, size: int) -> list[bytes]:
    return list(
        islice((line for line, _ in complete_lines(fd, 0, size) if line.strip()), HEAD_LINES)
    )


def new_state(fmt: str, path: Path, st: os.stat_result) -> SourceState:
    """The state a first import starts from; a Claude ``agent-*.jsonl`` is a subagent's."""
    sidechain = fmt == "claude-code" and path.name.startswith("agent-")
    return SourceState(fmt, st.st_dev, st.st_ino, ConvState(sidechain=sidechain))


def source_format(head: list[bytes], fmt: str) -> tuple[str | None, bool]:
    """The format a new source is read in (``fmt``: the one asked for, or auto), and
    whether its records said so. Records that do not tell yet (only bookkeeping so far)
    are read in the format asked for, taken at its word."""
    found = detect_lines(head)
    if found is None and fmt in CONVERTERS and head:
        return fmt, False
    return found, found is not None


def state_after(
    state: SourceState,
    key: str,
    batch: Batch,
    fd: int,
    st: os.stat_result,
    data: bytes | None = None,
) -> SourceState:
    """The source's state once ``batch`` is recorded: its key, offset, the tally of every
    record so far, and the fingerprint of every byte read (appends never change those
    bytes, so a file growing meanwhile leaves it right). A state without a CRC (an older
    importer's) starts one at 0. ``data``: the file's bytes from 0."""
    tally = Tally(state.tally)
    tally.update(batch.tally)
    start, crc = (state.offset, state.crc) if state.crc is not None else (0, 0)
    return replace(
        state,
        key=key,
        offset=batch.offset,
        tally=dict(sorted(tally.items())),
        mtime_ns=st.st_mtime_ns,
        tail=tail_digest(fd, batch.offset, data),
        crc=prefix_crc(fd, start, batch.offset, crc, data),
    )


def head_lines_of(data: bytes) -> list[bytes]:
    """``head_lines`` of a file whose bytes from 0 are ``data``: only the head is split."""
    lines: list[bytes] = []
    start, find = 0, data.find
    while len(lines) < HEAD_LINES:
        end = find(b"\n", start)
        if end < 0:
            break  # a torn last line waits, as in complete_lines
        line = data[start:end]
        if line.strip():
            lines.append(line)
        start = end + 1
    return lines


def read_range(fd: int, start: int, end: int) -> bytes | None:
    """The bytes [start, end) in one read when they fit one block (None otherwise, or when
    the file is shorter by now): a whole small file is read once for detection and
    conversion to share."""
    if end - start > BLOCK:
        return None
    data = os.pread(fd, end - start, start)
    return data if len(data) == end - start else None


def convert_range(
    fd: int, start: int, end: int, fmt: str, conv: ConvState, data: bytes | None = None
) -> Batch:
    """Every complete line in [start, end) converted; a torn last line waits (``offset``).

    ``data``: the bytes [start, end) when the caller has read them (``read_range``)."""
    convert = CONVERTERS[fmt]
    batch = Batch(offset=start)
    rows, tally = batch.rows, batch.tally
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    turn_ends, foreign_at, offset = 0, 0, start
    if data is None:
        data = read_range(fd, start, end)
    # Longer than a block, or shrunk meanwhile: the careful reader.
    lines = complete_lines(fd, start, end) if data is None else _split(data, start)
    for number, (line, after) in enumerate(lines, 1):
        offset = after
        if not line.strip():
            tally["dropped:blank"] += 1
            continue
        try:
            record = loads(line)
        except decode_error:
            tally["bad_line"] += 1
            continue
        step = convert(record, conv)
        bucket = step.bucket
        tally[bucket] += 1
        if step.rows:
            rows.extend(step.rows)
        if step.turn_end:
            turn_ends += 1
        if not foreign_at and bucket.startswith(FOREIGN):
            foreign_at = number
    batch.offset, batch.turn_ends, batch.foreign_at = offset, turn_ends, foreign_at
    return batch


def _split(data: bytes, start: int) -> Iterator[tuple[bytes, int]]:
    """Each complete line of ``data`` (read from offset ``start``), one split call."""
    parts = data.split(b"\n")
    parts.pop()  # after the last newline: empty, or a torn line that waits
    offset = start
    for line in parts:
        offset += len(line) + 1
        yield line, offset


def session_key(fmt: str, path: Path, conv: ConvState) -> str:
    """The key (also the store's file name and the slot name): never redacted after this,
    so a candidate redaction would change is passed over (a captured session id holding a
    secret already carries a tag): the file's own names next, a digest last."""
    stem = path.name.removesuffix(".jsonl")
    sid = str(conv.prov.get("source_session_id") or "")
    options: list[str]
    if fmt == "codex":
        prefix, options = "codex:", [sid, stem]
    elif conv.sidechain:
        prefix, options = "claude:", [f"{sid}:{stem}" if sid else "", f"{path.parent.name}:{stem}"]
    else:
        prefix, options = "claude:", [stem]
    for option in options:
        key = prefix + option
        if option and REDACTED_TAG not in key and redacted(key) == key:
            return key
    return prefix + digest(options[-1])


# The longest session file stem an import makes. The store adds at most ~30 bytes to it
# (``__<stamp>-N.jsonl`` of an archive, ``.jsonl.lock``) and NAME_MAX is 255 bytes.
KEY_NAME_MAX = 200


def key_refusal(key: str) -> str | None:
    """Why ``key`` cannot be a session of the store (its file name would be too long for
    the file system: every open of it fails with ENAMETOOLONG), or None."""
    size = len(safe_key(key).encode("utf-8", "surrogatepass"))
    if size <= KEY_NAME_MAX:
        return None
    return f"its session key is too long for a file name ({size} bytes, at most {KEY_NAME_MAX})"


TITLE_CHARS = 80


def session_title(
    rows: list[dict[str, Any]], prov: dict[str, Any], titles: Mapping[str, Any] | None = None
) -> str:
    """The agent's own title where it has one (the person's rename, the agent's title,
    then Claude Code's ``summary`` record, its name for the session), else the first
    prompt, else the cwd."""
    own = [titles.get(kind) for kind in claude_code.OWN_TITLES] if titles else []
    notices = [r for r in rows if r["role"] == "notice"]  # a converter's meta is a dict
    own += [r["content"] for r in notices if r.get("meta", {}).get("kind") == "summary"]
    for text in own:
        if isinstance(text, str) and text.strip():
            return _title(" ".join(redacted(text).split()))
    for item in rows:
        if item["role"] == "user":
            return _title(" ".join(str(item["content"]).split()))
    return os.path.basename(str(prov.get("cwd") or "")) or "imported session"


def _title(text: str) -> str:
    """The first prompt as a title: whole when it fits, else cut at a word (when one ends
    in the second half) and marked with an ellipsis, never mid-word without a sign."""
    if len(text) <= TITLE_CHARS:
        return text
    cut = text[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= TITLE_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def session_metadata(
    state: SourceState, path: Path, rows: list[dict[str, Any]], app: str | None
) -> dict[str, Any]:
    """Line 0 of the session (less what the store adds): its title, provenance of the
    source (``state``: the source's once its first batch is recorded)."""
    prov = state.conv.prov
    meta: dict[str, Any] = {
        "key": state.key,
        "title": session_title(rows, prov, state.conv.titles),
        "source": state.format,
        "source_path": str(path.absolute()),
    }
    meta.update({k: clean_text(v) for k, v in prov.items() if isinstance(v, str)})
    if app is not None:
        meta["app"] = app
    return meta


# The rows that make a conversation: a first read that yields none of them is no session
# of this format (a Codex file read as Claude Code: every record unknown), or none yet.
CONVERSATION_ROLES = frozenset({"user", "assistant"})
FORMAT_NAMES = {"claude-code": "Claude Code", "codex": "Codex CLI"}
FIT_BYTES = 1024 * 1024  # how much of a file the other converters try for the --format hint


def has_conversation(batch: Batch) -> bool:
    return any(row["role"] in CONVERSATION_ROLES for row in batch.rows)


def no_conversation_outcome(
    fd: int, size: int, batch: Batch, fmt: str, detected: bool
) -> tuple[str, str] | None:
    """(status, reason) for a source whose first read yields no conversation row, which is
    then not stored; None when it has one.

    Records of this format that are all bookkeeping so far (a session just started: a
    snapshot, a queue line) wait, "unchanged", for a later run. Anything else read in
    ``fmt`` without a single turn (every record unknown, or of another format) is "bad",
    and the reason names the ``--format`` that does yield turns, if one does."""
    if batch.offset == 0 or has_conversation(batch):
        return None
    known = sum(n for k, n in batch.tally.items() if not k.startswith((UNKNOWN, FOREIGN, "bad")))
    if detected and known:
        reason = f"no conversation in it yet ({known} records, no prompt or reply); not stored"
        return "unchanged", reason
    # The other converters that read a conversation out of the file's first FIT_BYTES.
    fits = [
        other
        for other in CONVERTERS
        if other != fmt
        and has_conversation(convert_range(fd, 0, min(size, FIT_BYTES), other, ConvState()))
    ]
    hint = (
        f"use --format {fits[0]}"
        if fits
        else "no --format fits: it is not a Claude Code or Codex CLI session"
    )
    name = FORMAT_NAMES.get(fmt, fmt)
    return "bad", f"no {name} turn in it; not stored ({hint})"


def format_warning(batch: Batch, fmt: str) -> list[str]:
    if not batch.foreign_at:
        return []
    return [
        f"the format changes at line {batch.foreign_at} of this run: those records are not {fmt}"
    ]
