"""A row as the store writes it (key order, redaction) and finds it again (revision targets)."""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

import orjson

from .reader import parse_json_line
from .redaction import RedactionReport, merge_reports, redact_text, redact_value
from .redaction.prefilter import value_may_hold_secret
from .roles import Role


def row_order(row: dict[str, Any]) -> dict[str, Any]:
    """The original's key order: role, content, cls (when given), ts, then the rest."""
    head = {k: row[k] for k in ("role", "content", "cls") if k in row}
    return {**head, "ts": None, **{k: v for k, v in row.items() if k not in head and k != "ts"}}


def redact_row(row: dict[str, Any]) -> tuple[dict[str, Any], RedactionReport]:
    """Every non-user row's content, meta and variants pass redaction before disk.

    A row with nothing to redact is returned as it is (no copy); each field is
    prefiltered by one scan (:mod:`.redaction.prefilter`), so a clean ``meta`` costs no
    per-string work.
    """
    if row.get("role") == Role.USER:
        return row, {}
    changed: dict[str, Any] = {}
    reports: list[RedactionReport] = []
    content = row.get("content")
    if isinstance(content, str):
        clean, report = redact_text(content)
        if report:  # an empty report means the text came back unchanged
            changed["content"] = clean
            reports.append(report)
    for name in ("meta", "variants"):
        if name in row and value_may_hold_secret(row[name]):
            value, report = redact_value(row[name])
            if report:
                changed[name] = value
                reports.append(report)
    if not changed:
        return row, {}
    return {**row, **changed}, merge_reports(*reports)


def missing_row(path: Path, stamps: tuple[str, ...]) -> str | None:
    """The first of ``stamps`` no row (not a revision) of the file bears, if any.

    One open and one mapping for all of them.
    """
    with path.open("rb") as fp:
        if os.fstat(fp.fileno()).st_size == 0:
            return stamps[0]
        with mmap.mmap(fp.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return next((ts for ts in stamps if not _row_in(mm, ts)), None)


def _row_in(mm: mmap.mmap, ts: str) -> bool:
    """Whether a row (not a revision) with this ts is in the mapped file.

    Scans backwards: a state change almost always targets a recent row (the running
    turn), so the search ends near the tail instead of costing the whole file. Our
    compact separator first, then the original's ``": "``.
    """
    for needle in (b'"ts":' + orjson.dumps(ts), b'"ts": ' + orjson.dumps(ts)):
        at = mm.rfind(needle)
        while at >= 0:
            start = mm.rfind(b"\n", 0, at) + 1
            end = mm.find(b"\n", at)
            value, bad = parse_json_line(mm[start : end if end >= 0 else len(mm)])
            if (
                not bad
                and isinstance(value, dict)
                and "_type" not in value
                and value.get("ts") == ts
            ):
                return True
            at = mm.rfind(needle, 0, at)
    return False
