"""Complete lines of a growing file from a byte offset; a torn last line waits.

The agent may be writing the last line right now: a line without its newline is left
for the next run, so it is never half-imported. Lines are not length-capped (a Claude
line with an inline image is megabytes) but are read in blocks, never the whole file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

BLOCK = 4 * 1024 * 1024


def complete_lines(fd: int, offset: int, end: int) -> Iterator[tuple[bytes, int]]:
    """(line without its newline, offset just past it) for each whole line in [offset, end)."""
    pending = b""
    pos = offset
    while pos < end:
        block = os.pread(fd, min(BLOCK, end - pos), pos)
        if not block:
            break
        pos += len(block)
        data = pending + block
        base = pos - len(data)
        start = 0
        while (nl := data.find(b"\n", start)) >= 0:
            yield data[start:nl], base + nl + 1
            start = nl + 1
        pending = data[start:]
