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
    # A line longer than a block is not kept while its blocks are searched: only each new
    # block is searched for its newline, and once found the line is read again whole. A
    # torn line of n bytes costs one read of n bytes and O(BLOCK) memory on every run
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
