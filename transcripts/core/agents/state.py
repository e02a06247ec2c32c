"""What the import keeps per source between runs (``.agent-imports/``): written with orjson,
so the field names are the keys states always had; read back with ``msgspec.convert``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ConvState:
    """A converter's memory between records and runs."""

    # Calls awaiting their result: the call id's digest → the tool's name.
    pending: dict[str, str] = field(default_factory=dict)
    open: bool = False  # a turn has begun and not ended yet
    prov: dict[str, str] = field(default_factory=dict)  # line 0's provenance: first wins
    # Claude Code only: a message id's digest → its blocks' marks (streaming duplicates),
    # whether the file is a subagent's (agent-*.jsonl), and the session's own titles.
    seen: dict[str, list[str]] = field(default_factory=dict)
    sidechain: bool = False
    titles: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class SourceState:
    """One source: its identity, how far it was read, and the fingerprint of those bytes
    (``source.tail_digest``, ``prefix_crc``; None in a state written before fingerprints)."""

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
