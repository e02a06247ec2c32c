"""A transcript file's bytes as whole lines, as the fold sees them (for the raw-line readers).

Split on ``\\n`` only; the final newline ends the last line and starts no new one; a BOM
is removed from line 0 only (the fold strips it at offset 0 only); a line longer than
``max_line`` is dropped (the fold skips it as ``oversize``; a BOM counts towards its length).
"""

from __future__ import annotations

from typing import Any

from .reader import UTF8_BOM, parse_json_line


def split_lines(data: bytes, max_line: int, *, at_file_start: bool = True) -> list[bytes]:
    """``data``'s lines without their ``\\n``; ``at_file_start``: ``data`` begins at byte 0."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if at_file_start and lines and lines[0].startswith(UTF8_BOM) and len(lines[0]) <= max_line:
        lines[0] = lines[0][len(UTF8_BOM) :]
    if any(len(line) > max_line for line in lines):
        lines = [line for line in lines if len(line) <= max_line]
    return lines


def first_record(lines: list[bytes]) -> dict[str, Any] | None:
    """The first line that parses to an object: what the fold takes as line 0."""
    for line in lines:
        value, bad = parse_json_line(line)
        if not bad and type(value) is dict:
            return value
    return None
