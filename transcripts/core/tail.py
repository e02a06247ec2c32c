"""The last ``budget`` bytes of a chain of transcript files, as whole lines.

For readers that only need the end of a session (the summary pass): the cost is the
budget, never the session's length. The files are read newest first, each from its end
by ``pread``; a line cut by the window's start is dropped (only whole lines are returned).
Each file's window is kept apart: revisions fold within their own file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .fsutil import open_regular
from .lines import split_lines


@dataclass(slots=True)
class FileTail:
    path: Path
    start: int  # byte offset of the first returned line in the file
    lines: list[bytes]  # whole lines, without "\n"; line 0 of the file included if start == 0


def read_tail(
    paths: list[Path], budget: int, max_line: int, last_size: int | None = None
) -> list[FileTail]:
    """Windows of ``paths`` (oldest first) covering the last ``budget`` bytes, oldest first.

    A line longer than ``max_line`` is dropped, as the fold drops it; an unterminated last
    line is kept (the fold keeps one too, as a torn tail it reports). Missing files are
    skipped (rotated away since they were listed); one that is no longer a regular file
    raises ``NotRegularFile`` (an ``OSError``), never blocks: the caller reads the whole
    session instead. ``last_size`` caps the newest file at the size of a snapshot taken
    before: lines appended since are not read.
    """
    out: list[FileTail] = []
    left = budget
    for path in reversed(paths):
        if left <= 0:
            break
        newest = path == paths[-1]
        try:
            # Never blocks on a FIFO planted in the folder; the session's own file is read
            # through a link, as every reader reads it.
            fd, st = open_regular(path, follow_links=newest)
        except FileNotFoundError:
            continue
        try:
            size = st.st_size
            if last_size is not None and newest:
                size = min(size, last_size)
            start = max(0, size - left)
            data = os.pread(fd, size - start, start)
        finally:
            os.close(fd)
        left -= len(data)
        if start > 0:
            # The first piece is the end of a line that began before the window (or, if the
            # byte before the window is "\n", a whole line: dropped too, one row is cheap).
            cut = data.find(b"\n")
            start += cut + 1 if cut >= 0 else len(data)
            data = data[cut + 1 :] if cut >= 0 else b""
        lines = split_lines(data, max_line, at_file_start=start == 0)
        out.append(FileTail(path, start, lines))
    out.reverse()
    return out
