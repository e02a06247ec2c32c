"""Bounded, total line reader: bytes in, (offset, line) out, never an exception on content.

Lines are split on ``\\n`` only (``str.splitlines`` also splits on U+2028, U+0085…, which
would tear a valid record). A line over the maximum is skipped without ever being held in
memory whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from .codec import MAX_LINE_BYTES, RecordKind

BLOCK_SIZE = 4 * 1024 * 1024
UTF8_BOM = b"\xef\xbb\xbf"
FIRST_READ, MAX_READ = 4096, 1024 * 1024  # line_at: a small read first, growing to this


@dataclass(frozen=True, slots=True)
class Anomaly:
    """One skipped or suspicious line: what kind, and where (byte offset in ``file``)."""

    kind: str
    offset: int
    file: str = ""
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "offset": self.offset, "file": self.file, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class RawLine:
    offset: int
    data: bytes | None  # None: longer than the maximum, skipped
    terminated: bool  # False only for the last line when the file does not end in "\n"


def iter_line_batches(
    fp: IO[bytes], *, max_line: int = MAX_LINE_BYTES, block_size: int = BLOCK_SIZE
) -> Iterator[tuple[int, list[bytes]] | RawLine]:
    """``iter_lines`` in batches, so the fold's hot loop makes no object per line: either
    ``(offset, parts)``, complete lines in order from byte ``offset`` (a part over ``max_line``
    stands for an oversize line), or a ``RawLine`` for an oversize line that spanned blocks
    and for an unterminated last line.
    """
    offset = 0  # offset of the first byte of ``carry``
    carry = b""
    skipping_from: int | None = None  # set while discarding an oversize line
    while True:
        block = fp.read(block_size)
        if not block:
            break
        if skipping_from is not None:
            nl = block.find(b"\n")
            if nl < 0:
                offset += len(block)
                continue
            yield RawLine(skipping_from, None, True)
            offset += nl + 1
            block = block[nl + 1 :]
            skipping_from = None
        buf = carry + block if carry else block
        parts = buf.split(b"\n")
        carry = parts.pop()
        if parts:
            yield offset, parts
            offset += len(buf) - len(carry)  # every part plus its "\n"
        if len(carry) > max_line:
            skipping_from = offset
            offset += len(carry)
            carry = b""
    if skipping_from is not None:
        yield RawLine(skipping_from, None, False)
    elif carry:
        yield RawLine(offset, carry, False)


def iter_lines(
    fp: IO[bytes], *, max_line: int = MAX_LINE_BYTES, block_size: int = BLOCK_SIZE
) -> Iterator[RawLine]:
    for item in iter_line_batches(fp, max_line=max_line, block_size=block_size):
        if isinstance(item, RawLine):
            yield item
            continue
        offset, parts = item
        for part in parts:
            yield RawLine(offset, None if len(part) > max_line else part, True)
            offset += len(part) + 1


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def parse_json_line(data: bytes) -> tuple[Any, str]:
    """Decode one line. Returns (value, "") or (None, anomaly kind)."""
    try:
        return orjson.loads(data), ""
    except (orjson.JSONDecodeError, RecursionError):
        pass
    # Slow path, only for lines orjson refuses: tell bad UTF-8 from bad JSON, and accept
    # what the original's stdlib writer could produce (lone surrogate escapes).
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "bad_utf8"
    if not text.strip():
        return None, "blank"
    try:
        return json.loads(text, parse_constant=_reject_constant), ""
    except (ValueError, RecursionError):
        return None, "bad_json"


def parse_metadata_line(line: bytes) -> dict[str, Any] | None:
    """Line 0 (with or without its ``\\n``) when it is a metadata record (BOM tolerated)."""
    value, bad = parse_json_line(line.rstrip(b"\n").removeprefix(UTF8_BOM))
    if bad or not isinstance(value, dict) or value.get("_type") != RecordKind.METADATA:
        return None
    return value


def read_line0(path: Path, max_line: int = MAX_LINE_BYTES) -> dict[str, Any] | None:
    """Line 0 of a transcript file when it is a metadata record, else None; OSError raises."""
    with path.open("rb") as fp:
        return parse_metadata_line(fp.readline(max_line))


def line_at(fd: int, offset: int) -> bytes:
    """The line starting at ``offset``: a small read first, growing for a long line."""
    parts: list[bytes] = []
    at, size = offset, FIRST_READ
    while True:
        chunk = os.pread(fd, size, at)
        end = chunk.find(b"\n")
        if end >= 0 or not chunk:
            parts.append(chunk[:end] if end >= 0 else chunk)
            return b"".join(parts)
        parts.append(chunk)
        at += len(chunk)
        size = min(size * 4, MAX_READ)
