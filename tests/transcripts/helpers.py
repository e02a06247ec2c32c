"""Shared helpers for the pure-core transcript tests: no Django, ``tmp_path`` only."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from transcripts.core.fold import Folded, FoldReport, fold_lines
from transcripts.core.reader import iter_lines
from transcripts.core.store import TranscriptStore
from transcripts.core.timestamps import parse_ts

FIXTURES_DIR = Path(__file__).resolve().parents[1] / "data" / "kirocrew-fixtures"
FIXTURE_TRANSCRIPTS = sorted(FIXTURES_DIR.glob("*.jsonl"))
FIXTURE_ARCHIVE = FIXTURES_DIR / "archive" / "research-notes__20251220-090000.jsonl"

KEY = "dashboard:s1"
BASE = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

# Anomaly kinds of a line the reader skips (as opposed to a kept line it only flags).
SKIP_KINDS = frozenset(
    {"blank", "bad_json", "bad_utf8", "not_object", "torn_tail", "oversize", "stray_record"}
)


def github_token() -> str:
    """A credential-shaped value built at runtime, so no secret sits in the source."""
    return "ghp_" + "A" * 36


class FakeClock:
    """An injectable store clock: returns ``now``, then advances it by ``step``."""

    def __init__(self, start: datetime = BASE, step: timedelta = timedelta(0)) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        current = self.now
        self.now = current + self.step
        return current

    def shift(self, delta: timedelta) -> None:
        self.now += delta


def make_store(root: Path, **kwargs: Any) -> TranscriptStore:
    kwargs.setdefault("fsync", "never")
    return TranscriptStore(root, **kwargs)


def ticking_store(root: Path, **kwargs: Any) -> TranscriptStore:
    """``make_store`` whose clock moves 1 ms per reading (distinct stamps, no wall clock)."""
    kwargs.setdefault("clock", FakeClock(step=timedelta(milliseconds=1)))
    return make_store(root, **kwargs)


def fill_session(
    store: TranscriptStore, n: int, *, key: str = KEY, size: int = 10, **meta: Any
) -> list[str]:
    """A session of ``n`` rows alternating user/assistant; returns their ts."""
    stamps = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        stamps += store.append_row(key, role, f"m{i}:" + "x" * size, metadata=meta or None).ts
    return stamps


def contents(rows: Iterable[dict[str, Any]]) -> list[Any]:
    return [r["content"] for r in rows]


def ts_at(seconds: float) -> str:
    """A deterministic offset-aware ts, ``seconds`` after BASE."""
    return (BASE + timedelta(seconds=seconds)).isoformat()


def line(record: dict[str, Any]) -> bytes:
    """One record as the store writes it: compact JSON and a newline."""
    return orjson.dumps(record) + b"\n"


def meta_line(**extra: Any) -> bytes:
    return line(
        {"_type": "metadata", "created_at": BASE.isoformat(), "last_consolidated": 0, **extra}
    )


def row(role: str, content: Any, ts: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "ts": ts, **extra}


def revision(target_ts: str, patch: dict[str, Any], ts: str) -> dict[str, Any]:
    return {"_type": "revision", "target_ts": target_ts, "patch": patch, "ts": ts}


def fold_data(data: bytes, **kwargs: Any) -> Folded:
    """Fold bytes through the real reader; ``max_line``/``block_size`` go to ``iter_lines``."""
    return fold_lines(iter_lines(io.BytesIO(data), **kwargs))


def kinds(report: FoldReport | Folded) -> list[tuple[str, int]]:
    if isinstance(report, Folded):
        report = report.report
    return [(a.kind, a.offset) for a in report.anomalies]


def raw_lines(path: Path) -> list[bytes]:
    """The file's lines without their newline (a final unterminated piece included)."""
    data = path.read_bytes()
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def json_lines(path: Path) -> list[Any]:
    """Every line parsed with the standard library (the original system's reader)."""
    return [json.loads(part) for part in raw_lines(path)]


def line_zero(path: Path) -> dict[str, Any]:
    """The file's first record (metadata, or an archive's header), parsed."""
    first: dict[str, Any] = json_lines(path)[0]
    return first


def parsed(ts: object) -> datetime:
    value = parse_ts(ts)
    assert value is not None, f"unparseable ts {ts!r}"
    return value


def assert_strictly_increasing(stamps: Iterable[object]) -> None:
    values = [parsed(ts) for ts in stamps]
    for earlier, later in itertools.pairwise(values):
        assert later > earlier, f"{later.isoformat()} is not after {earlier.isoformat()}"


def file_ts(path: Path) -> list[str]:
    """The ``ts`` of every record after line 0, in file order (rows and revisions)."""
    return [obj["ts"] for obj in json_lines(path)[1:] if isinstance(obj, dict) and "ts" in obj]


def set_mtime_ns(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


def copy_fixtures(dest: Path) -> Path:
    """The original system's sessions directory, copied into ``dest`` (archive included)."""
    shutil.copytree(FIXTURES_DIR, dest, ignore=shutil.ignore_patterns("README.md"))
    return dest


def archive_files(store: TranscriptStore) -> list[Path]:
    if not store.archive_dir.is_dir():
        return []
    return sorted(store.archive_dir.glob("*.jsonl"))


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (it waits only for its reaper) does not."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def live_children(pid: int | None = None) -> set[int]:
    """The live child processes of ``pid`` (this process by default), of every thread."""
    pid = os.getpid() if pid is None else pid
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            found.update(int(c) for c in (task / "children").read_text().split())
    return {child for child in found if process_alive(child)}
