"""THE fold: the one function that turns transcript records into the message list.

Line 0 is the metadata (an archive's: its header); every other object without ``_type`` is a
row; a revision (``codec.ROW_CHANGES``) merges its patch into the row ``target_ts`` names and
may move it (``_after_ts``; moves applied after all merges). Nothing on disk raises: bad lines
are reported (docs/DESIGN.md, "Fold anomalies"). A file without revisions folds to its rows.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from .codec import (
    FORBIDDEN_PATCH_KEYS,
    MAX_LINE_BYTES,
    POSITION_HINT,
    ROW_CHANGES,
    TARGET,
    RecordKind,
)
from .reader import (
    UTF8_BOM,
    Anomaly,
    RawLine,
    iter_line_batches,
    parse_json_line,
)
from .timestamps import ts_strictly_after


@dataclass(slots=True)
class FoldReport:
    anomalies: list[Anomaly] = field(default_factory=list)
    lines: int = 0
    revisions: int = 0

    def add(self, kind: str, offset: int, file: str, detail: str = "") -> None:
        self.anomalies.append(Anomaly(kind, offset, file, detail))

    def counts(self) -> dict[str, int]:
        return dict(Counter(a.kind for a in self.anomalies))

    def extend(self, other: FoldReport) -> None:
        self.anomalies.extend(other.anomalies)
        self.lines += other.lines
        self.revisions += other.revisions

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "revisions": self.revisions,
            "counts": self.counts(),
            "anomalies": [a.as_dict() for a in self.anomalies],
        }


@dataclass(slots=True)
class Folded:
    metadata: dict[str, Any] | None
    rows: list[dict[str, Any]]
    report: FoldReport
    header: dict[str, Any] | None = None  # archive header
    # With keep_raw: each row's original line, and the indexes of rows a revision changed.
    raw: list[bytes] | None = None
    patched: set[int] = field(default_factory=set)
    # Physical (file) index of each folded row; None when no position hint moved a row.
    order: list[int] | None = None
    bad_lines: list[bytes] = field(default_factory=list)  # with keep_raw: skipped lines' bytes


class FoldState(Folded):
    """A fold in progress: the result it builds, and what it needs while reading."""

    def __init__(self, file: str, keep_raw: bool) -> None:
        super().__init__(None, [], FoldReport(), raw=[] if keep_raw else None)
        self.file = file
        self.by_ts: dict[str, int] | None = None  # built on the first revision only
        self.moves: list[tuple[int, str]] = []
        self.last_ts: str | None = None
        self.first = True

    def _index(self) -> dict[str, int]:
        if self.by_ts is None:
            stamps = ((row.get("ts"), i) for i, row in enumerate(self.rows))
            self.by_ts = {ts: i for ts, i in stamps if isinstance(ts, str)}
        return self.by_ts

    def _check_ts(self, ts: Any, offset: int) -> None:
        if not isinstance(ts, str):
            self.report.add("missing_ts", offset, self.file)
            return
        if self.last_ts is not None:
            later = ts_strictly_after(ts, self.last_ts)
            if later is None:
                self.report.add("bad_ts", offset, self.file)
                return
            if not later:
                kind = "dup_ts" if ts == self.last_ts else "non_monotonic_ts"
                self.report.add(kind, offset, self.file)
        self.last_ts = ts

    def feed(self, line: RawLine) -> None:
        report = self.report
        report.lines += 1
        data = line.data
        if data is None:
            report.add("oversize", line.offset, self.file)
            return
        if line.offset == 0 and data.startswith(UTF8_BOM):
            report.add("bom", line.offset, self.file)
            data = data[len(UTF8_BOM) :]
        if not data.strip():
            report.add("blank", line.offset, self.file)
            return
        obj, bad = parse_json_line(data)
        if bad or type(obj) is not dict:
            kind = "torn_tail" if not line.terminated else bad or "not_object"
            report.add(kind, line.offset, self.file)
            if self.raw is not None:
                self.bad_lines.append(data)
            return
        self._record(obj, data, line.offset, line.terminated)

    def _record(self, obj: dict[str, Any], data: bytes, offset: int, terminated: bool) -> None:
        if not terminated:
            self.report.add("unterminated", offset, self.file)
        first, self.first = self.first, False
        record_type = obj.get("_type")
        if record_type is None:
            self._row(obj, data, offset)
        elif isinstance(record_type, str) and record_type in ROW_CHANGES:  # a list won't hash
            self._change(obj, ROW_CHANGES[record_type](obj), offset)
        elif record_type == RecordKind.METADATA and first:
            self.metadata = obj
        elif record_type == RecordKind.ARCHIVE and first:
            self.header = obj
        else:
            self.report.add("stray_record", offset, self.file, str(record_type)[:40])
            if self.raw is not None:
                self.bad_lines.append(data)  # a rewrite archives it rather than drop it

    def _row(self, obj: dict[str, Any], data: bytes, offset: int) -> None:
        self._check_ts(obj.get("ts"), offset)
        if self.by_ts is not None:
            ts = obj.get("ts")
            if isinstance(ts, str):
                self.by_ts[ts] = len(self.rows)
        self.rows.append(obj)
        if self.raw is not None:
            self.raw.append(data)

    def _change(self, obj: dict[str, Any], patch: Any, offset: int) -> None:
        self.report.revisions += 1
        self._check_ts(obj.get("ts"), offset)
        target = obj.get(TARGET)
        if not isinstance(target, str) or not isinstance(patch, dict):
            self.report.add("invalid_revision", offset, self.file)
            return
        index = self._index().get(target)
        if index is None:
            self.report.add("orphan_revision", offset, self.file)
            return
        if any(k in patch for k in FORBIDDEN_PATCH_KEYS):
            self.report.add(
                "invalid_revision", offset, self.file, "patch may not change ts or _type"
            )
            patch = {k: v for k, v in patch.items() if k not in FORBIDDEN_PATCH_KEYS}
        if POSITION_HINT in patch:
            patch = dict(patch)
            anchor = patch.pop(POSITION_HINT)
            if isinstance(anchor, str) and (anchor == "" or anchor in self._index()):
                self.moves.append((index, anchor))
            else:
                self.report.add("invalid_revision", offset, self.file, "unknown position anchor")
        if patch:
            self._merge(index, patch, offset)

    def _merge(self, index: int, patch: dict[str, Any], offset: int) -> None:
        # (the offset index records the patch instead)
        self.rows[index] = {**self.rows[index], **patch}
        self.patched.add(index)

    def _apply_moves(self) -> None:
        if not self.moves:
            return
        order = self._moved_order(self._index())
        self.order = order
        self.rows = [self.rows[i] for i in order]
        if self.raw is not None:
            self.raw = [self.raw[i] for i in order]
        position = {old: new for new, old in enumerate(order)}
        self.patched = {position[i] for i in self.patched} | {position[i] for i, _ in self.moves}

    def _moved_order(self, by_ts: dict[str, int]) -> list[int]:
        """The rows' order after the moves, in file order, on an index-linked list: each move is
        O(1), so many moves in a long file stay linear (list edits cost O(rows) per move).
        """
        n = len(self.rows)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        head = 0
        for index, anchor in self.moves:
            after = -1 if anchor == "" else by_ts[anchor]
            if after == index:
                continue  # "after itself": it stays where it is
            # Unlink ``index``...
            p, q = prv[index], nxt[index]
            if p >= 0:
                nxt[p] = q
            else:
                head = q
            if q >= 0:
                prv[q] = p
            # ...and link it in after ``after`` (at the head for -1).
            q = head if after < 0 else nxt[after]
            if after < 0:
                head = index
            else:
                nxt[after] = index
            prv[index], nxt[index] = after, q
            if q >= 0:
                prv[q] = index
        order = []
        i = head
        while i >= 0:
            order.append(i)
            i = nxt[i]
        return order

    def result(self) -> Folded:
        self._apply_moves()
        return self


def fold_lines(lines: Iterable[RawLine], *, file: str = "") -> Folded:
    state = FoldState(file, keep_raw=False)
    for line in lines:
        state.feed(line)
    return state.result()


def fold_stream(
    fp: IO[bytes], *, file: str = "", keep_raw: bool = False, max_line: int = MAX_LINE_BYTES
) -> Folded:
    """``fold_lines(iter_lines(fp))`` with the common line (a row whose ``ts`` is strictly later
    than the previous record's, same format) handled without a per-line object or call.
    Behaviour must stay identical to ``fold_lines``: the fold identity tests compare them.
    """
    state = FoldState(file, keep_raw)
    feed, record = state.feed, state._record
    rows, raw = state.rows, state.raw
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    fast = 0  # lines counted here rather than in feed()
    for item in iter_line_batches(fp, max_line=max_line):
        if isinstance(item, RawLine):
            feed(item)
            continue
        offset, parts = item
        for data in parts:
            if state.first or len(data) > max_line:
                # Line 0 (BOM, metadata, archive header) and oversize lines: the full path.
                feed(RawLine(offset, None if len(data) > max_line else data, True))
                offset += len(data) + 1
                continue
            try:
                obj = loads(data)
            except (decode_error, RecursionError):
                feed(RawLine(offset, data, True))  # blank, bad UTF-8, lenient JSON, torn…
                offset += len(data) + 1
                continue
            if type(obj) is not dict:
                feed(RawLine(offset, data, True))
                offset += len(data) + 1
                continue
            fast += 1
            ts = obj.get("ts")
            last = state.last_ts
            if (
                obj.get("_type") is None
                and type(ts) is str
                and last is not None
                and len(ts) == len(last)
                and ts > last
                and ts[-6:] == last[-6:]
                and ts[-6] in "+-"
            ):
                # A row, strictly later than the previous record (ts_strictly_after's
                # same-format fast path): exactly what _row + _check_ts do for it.
                state.last_ts = ts
                if state.by_ts is not None:
                    state.by_ts[ts] = len(rows)
                rows.append(obj)
                if raw is not None:
                    raw.append(data)
            else:
                record(obj, data, offset, True)
            offset += len(data) + 1
    state.report.lines += fast
    return state.result()


def fold_bytes(data: bytes, *, file: str = "") -> Folded:
    return fold_stream(io.BytesIO(data), file=file)
