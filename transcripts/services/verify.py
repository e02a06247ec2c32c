"""``verify_transcripts``: transcript invariants and mirror drift; repair touches the mirror only.

Per transcript: every fold anomaly, fold identity (a file without revisions folds to the
rows a plain stdlib parse of its lines gives) and drift of its row; then rows without a file.
"""

from __future__ import annotations

import json
import os
import stat
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, transaction

from ..core.codec import MAX_LINE_BYTES
from ..core.errors import TranscriptError
from ..core.fold import FoldReport, fold_bytes
from ..core.fsutil import kind_of, regular_files
from ..core.keys import safe_key
from ..core.reader import UTF8_BOM, read_line0
from ..core.rewrite import rotation_blocker
from ..models import Session
from ..runtime import get_store
from .importing import session_index
from .sync import DiskState, disk_state, key_for_file

DRIFT_FIELDS = (
    *("sig", "gen", "size", "row_count", "user_turns", "title", "closed", "pinned"),
    *("source", "project"),  # migration 0005 guessed these from the key: repair reads line 0
)
MIRROR_KINDS = frozenset({"drift", "file_without_row", "row_without_file"})


@dataclass(frozen=True, slots=True)
class Finding:
    key: str
    kind: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.key}: {self.kind}" + (f": {self.detail}" if self.detail else "")


@dataclass(slots=True)
class VerifyResult:
    checked: int = 0
    findings: list[Finding] = field(default_factory=list)
    repaired: list[Finding] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        """What is still wrong (repairs done)."""
        return [f for f in self.findings if f not in self.repaired]


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _stdlib_rows(data: bytes) -> list[Any]:
    """Rows as a plain ``json.loads`` of each line sees them: the fold-identity oracle."""
    rows = []
    for i, line in enumerate(data.split(b"\n")):
        if len(line) > MAX_LINE_BYTES:
            continue
        try:
            value = json.loads(
                (line.removeprefix(UTF8_BOM) if i == 0 else line).decode(),
                parse_constant=_reject_constant,
            )
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and value.get("_type") is None:
            rows.append(value)
    return rows


def _anomaly_findings(key: str, report: FoldReport) -> list[Finding]:
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for anomaly in report.anomalies:
        groups[(anomaly.kind, anomaly.file)].append(anomaly.offset)
    return [
        Finding(key, kind, f"{len(offsets)} in {file}, first at byte {min(offsets)}")
        for (kind, file), offsets in sorted(groups.items())
    ]


def _drift(key: str, session: Session, state: DiskState) -> list[Finding]:
    disk = state.fields()
    diffs = [
        f"{name} mirror={getattr(session, name)!r} disk={disk[name]!r}"
        for name in DRIFT_FIELDS
        if getattr(session, name) != disk[name]
    ]
    return [Finding(key, "drift", "; ".join(diffs))] if diffs else []


def session_verify(*, key: str, session: Session | None = None) -> list[Finding]:
    """Every finding for one transcript (``session``: its row, or None when it has none)."""
    store = get_store()
    path = store.path(key)
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):  # never read through a link, never block on a FIFO
            return [Finding(key, "not_regular_file", f"not a regular file: {kind_of(mode)}")]
        data = path.read_bytes()
        state = disk_state(key)
    except (OSError, TranscriptError) as exc:
        return [Finding(key, "unreadable", str(exc))]
    findings = _anomaly_findings(key, state.report or FoldReport())
    current = fold_bytes(data, file=path.name)
    if current.report.revisions == 0:
        expected = _stdlib_rows(data)
        if current.rows != expected:
            detail = f"fold gives {len(current.rows)} rows, the lines hold {len(expected)}"
            findings.append(Finding(key, "fold_identity", detail))
    blocker = rotation_blocker(store, key)  # appends no longer try: say so here
    if blocker is not None:
        findings.append(Finding(key, "cannot_rotate", blocker))
    if session is None:
        findings.append(Finding(key, "file_without_row", path.name))
    else:
        findings += _drift(key, session, state)
    return findings


def session_verify_all(
    *, repair: bool = False, progress: Callable[[str, list[Finding]], None] | None = None
) -> VerifyResult:
    """Verify every transcript in the store and every ``Session`` row. Any entry but a
    regular file is a finding, never opened, and its name's row is not called fileless."""
    store = get_store()
    result = VerifyResult()
    sessions = {s.key: s for s in Session.objects.all()}
    on_disk: set[str] = set()
    files, skipped = regular_files(store.root)
    for entry in skipped:
        finding = Finding(entry.path.name, "not_regular_file", f"{entry.reason}; skipped")
        result.checked += 1
        result.findings.append(finding)
        on_disk |= {k for k, s in sessions.items() if s.safe_key == entry.path.stem}
        if progress is not None:
            progress(entry.path.name, [finding])
    for path in files:
        try:
            key = key_for_file(path, read_line0(path))
        except OSError as exc:
            findings = [Finding(path.name, "unreadable", str(exc))]
        else:
            if safe_key(key) != path.name.removesuffix(".jsonl"):
                findings = [Finding(path.name, "bad_file_name", "not <safe_key>.jsonl")]
            else:
                on_disk.add(key)
                findings = session_verify(key=key, session=sessions.get(key))
        result.checked += 1
        result.findings += findings
        if progress is not None:
            progress(path.name, findings)
    for key in sorted(sessions.keys() - on_disk):
        result.findings.append(Finding(key, "row_without_file", "the transcript is gone"))
    if repair:
        result.repaired = _repair([f for f in result.findings if f.kind in MIRROR_KINDS])
    return result


def _repair(findings: list[Finding]) -> list[Finding]:
    repaired = []
    for finding in findings:
        if finding.kind == "row_without_file":
            Session.objects.filter(key=finding.key).delete()
        else:
            try:
                with transaction.atomic():  # a refused write rolls back alone
                    session_index(key=finding.key)
            except (OSError, TranscriptError, DatabaseError, OverflowError):
                continue
        repaired.append(finding)
    return repaired
