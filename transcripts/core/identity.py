"""A transcript's identity: what a derived artifact (a summary sidecar) is valid for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .codec import MAX_LINE_BYTES, generation
from .reader import read_line0


@dataclass(frozen=True, slots=True)
class Identity:
    """``sig`` moves with every append (strict sig), ``gen`` with every content rewrite."""

    sig: int  # st_mtime_ns of the transcript
    gen: int  # metadata rotation_generation: advanced by every content rewrite
    size: int


def read_identity(path: Path, max_line: int = MAX_LINE_BYTES) -> Identity | None:
    """``sig`` first, then ``gen`` (the order the summary guard relies on); None if missing."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    try:
        metadata = read_line0(path, max_line)
    except FileNotFoundError:  # deleted since the stat: an empty line 0 reads as gen 0
        metadata = None
    return Identity(st.st_mtime_ns, generation(metadata), st.st_size)
