"""The store's files: where a session's transcript, lock and archives live, the cheap reads
of them (line 0, sig, identity) and the fold of one file.

``TranscriptStore`` (``store.py``) adds appends; the rewrites (``rewrite.py``) and the
session chain (``chain.py``) take a ``StoreFiles``, so none imports the store that calls them.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from . import locking
from .archive import archive_candidates
from .codec import MAX_LINE_BYTES, generation
from .errors import SessionNotFound
from .fold import Folded, fold_stream
from .fsutil import FsyncPolicy
from .keys import BARE_PREFIX, safe_key
from .reader import read_line0
from .timestamps import now_local

# The original's rotation limits: past MAX_BYTES keep at most KEEP_LINES newest rows.
MAX_BYTES = 10 * 1024 * 1024
KEEP_LINES = 200


@dataclass(frozen=True, slots=True)
class Identity:
    """What a derived artifact (a summary sidecar) is valid for."""

    sig: int  # st_mtime_ns: moves with every append (strict sig)
    gen: int  # line 0's rotation_generation: advanced by every content rewrite
    size: int


class StoreFiles:
    def __init__(
        self,
        root: Path,
        *,
        fsync: FsyncPolicy | str = FsyncPolicy.ROTATE,
        max_bytes: int = MAX_BYTES,
        keep_lines: int = KEEP_LINES,
        lock_timeout: float = locking.DEFAULT_TIMEOUT_S,
        clock: Callable[[], datetime] = now_local,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.root = Path(root)
        self.fsync = FsyncPolicy.parse(fsync)
        self.max_bytes = max_bytes
        self.keep_lines = keep_lines
        self.lock_timeout = lock_timeout
        self.clock = clock
        self.max_line = max_line
        # (st_dev, st_ino) -> size at which a rotation left the file over the limit
        # (an oversize line, no line 0): retried only once the file has doubled.
        self._stuck: dict[tuple[int, int], int] = {}

    # ------------------------------------------------------------------ paths
    @property
    def archive_dir(self) -> Path:
        return self.root / "archive"

    def path(self, key: str) -> Path:
        return self.root / f"{safe_key(key)}.jsonl"

    def lock_path(self, key: str) -> Path:
        return self.root / f"{safe_key(key)}.jsonl.lock"

    def archive_paths(self, key: str) -> list[Path]:
        """Archives of this session, oldest first.

        Besides ``<safe_key>__*`` this accepts the bare slot stem the original's seed
        data used (``research-notes__*`` for ``dashboard_research-notes``) when no
        transcript of that bare name exists to claim them.
        """
        stems = [safe_key(key)]
        if stems[0].startswith(BARE_PREFIX):
            bare = stems[0][len(BARE_PREFIX) :]
            if bare and not (self.root / f"{bare}.jsonl").exists():
                stems.append(bare)
        return archive_candidates(self.archive_dir, *stems)

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with locking.hold(str(self.lock_path(key)), self.lock_timeout):
            yield

    # ------------------------------------------------------------------ cheap reads
    def exists(self, key: str) -> bool:
        # os.path, not pathlib: a key too long for a file name (ENAMETOOLONG) is False.
        return os.path.isfile(self.path(key))

    def keys_on_disk(self) -> list[Path]:
        return sorted(p for p in self.root.glob("*.jsonl") if p.is_file())

    def read_metadata(self, key: str) -> dict[str, Any] | None:
        try:
            return read_line0(self.path(key), self.max_line)
        except OSError as exc:  # no file can have a name over NAME_MAX: none there
            if exc.errno in (errno.ENOENT, errno.ENAMETOOLONG):
                return None
            raise

    def sig(self, key: str) -> int | None:
        try:
            return self.path(key).stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def identity(self, key: str) -> Identity | None:
        """Snapshot ``sig`` first, then ``gen`` (the order the summary guard relies on)."""
        path = self.path(key)
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        try:
            metadata = read_line0(path, self.max_line)
        except FileNotFoundError:  # deleted since the stat: an empty line 0 reads as gen 0
            metadata = None
        return Identity(st.st_mtime_ns, generation(metadata), st.st_size)

    def _identity_now(self, key: str) -> Identity:
        identity = self.identity(key)
        if identity is None:  # only if someone removed the file behind the lock's back
            raise SessionNotFound(key)
        return identity

    # ------------------------------------------------------------------ one file folded
    def read_file(self, key: str, *, keep_raw: bool = False) -> Folded:
        path = self.path(key)
        with path.open("rb") as fp:
            return fold_stream(fp, file=path.name, keep_raw=keep_raw, max_line=self.max_line)
