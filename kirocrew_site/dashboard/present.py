"""Rows, summaries and the intent timeline shaped for the templates (pure). Live rows are
rendered here too, so a row reads the same live and after a reload. The timeline is inline
SVG whose viewBox is the turn axis (it scales without a script); its coordinates are
strings so no template localization turns ``2.5`` into ``2,5``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise
from typing import Any

from summaries.core.backends import HEURISTIC
from summaries.core.intents import intent_state
from transcripts.core.fold import FoldReport
from transcripts.core.paging import cursor_of, parse_cursor
from transcripts.core.roles import TOOL_ROLES, Role
from transcripts.core.timestamps import parse_ts, source_ts
from transcripts.core.user_turns import is_injected, is_user_turn

from .markdown import render_block, render_code

# Every other role reads as its name ("tool_call": "Tool call").
ROLE_LABELS: dict[str, str] = {
    Role.USER: "You",
    Role.ASSISTANT: "Agent",
    Role.MERGED_SUMMARY: "Merged result",
    Role.INJECT: "Injected",
}
# Anomalies whose row is still shown (its ts or its nesting is odd); every other kind is a
# skipped line.
KEPT_KINDS = frozenset(
    {"dup_ts", "non_monotonic_ts", "missing_ts", "bad_ts", "bom", "unterminated", "too_deep"}
)
KIND_LABELS = {
    "blank": "blank line",
    "bad_json": "not valid JSON",
    "bad_utf8": "not valid UTF-8",
    "not_object": "not a JSON object",
    "oversize": "line over the size limit",
    "torn_tail": "torn last line (an interrupted write)",
    "stray_record": "unexpected record",
    "orphan_revision": "revision of a row that is not there",
    "invalid_revision": "malformed revision",
    "dup_ts": "duplicate timestamp",
    "non_monotonic_ts": "timestamp out of order",
    "missing_ts": "row without a timestamp",
    "bad_ts": "unreadable timestamp",
    "bom": "byte-order mark at the start",
    "unterminated": "last line not terminated",
    "too_deep": "row nested too deep (shown as [nested too deep])",
}
STATE_LABELS = {
    "needs-you": "Needs you",
    "in-progress": "Active",
    "done": "Done",
    "dropped": "Dropped",
}
# Why a badge says what it says (summaries/core/payload.py EVIDENCE_KINDS, one label each).
EVIDENCE_LABELS = {
    "test_passed": "Tests passed",
    "test_failed": "Last run failed",
    "merged_unverified": "Closed without a passing run",
    "dropped": "You dropped it",
    "user_confirmed": "You confirmed it works",
    "user_deferred": "You said you would check later",
    "pending_decision": "Waiting on your answer",
}
NO_EVIDENCE = "No test run or confirmation seen"
OFFLINE_ESTIMATE = "Offline estimate"


def written_by(model: object) -> dict[str, Any]:
    """The panel's byline for a stored summary's ``model`` ("" when it records none)."""
    if model == HEURISTIC:
        return {"label": OFFLINE_ESTIMATE, "estimate": True}
    if isinstance(model, str) and model.strip():
        return {"label": f"Written by {model.strip()}", "estimate": False}
    return {"label": "", "estimate": False}


class RowKind(StrEnum):
    USER = "user"
    NOTE = "note"  # automation under role user, an empty message, any other role
    ASSISTANT = "assistant"
    TOOL = "tool"
    ERROR = "error"


@dataclass(slots=True)
class Item:
    kind: RowKind  # its CSS class: row-<kind>
    label: str
    cursor: str
    ts: str
    when: str
    html: str  # the text as sanitized HTML (markdown.render_block)
    turn: int | None = None
    preview: str = ""
    collapsed: bool = False
    stored: str = ""  # when the row was stored, shown only where it differs from ``when``


@dataclass(slots=True)
class FoldWarning:
    skipped: int = 0
    kept: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False, indent=2, default=str)


def when(ts: Any) -> str:
    return ts[:16].replace("T", " ") if isinstance(ts, str) else ""


def row_stamp(row: dict[str, Any]) -> str:
    """The row's ts as its cursor spells it ("" for none)."""
    ts = row.get("ts")
    return str(ts) if ts is not None else ""


def happened(row: dict[str, Any]) -> tuple[str, str, str]:
    """(the ``datetime`` attribute, the time shown, when it was stored if that reads
    differently): an imported row happened when its agent wrote it (``meta.source_ts``)."""
    source = source_ts(row)
    if not isinstance(source, str) or parse_ts(source) is None:
        return row_stamp(row), when(row.get("ts")), ""
    shown, stored = when(source), when(row.get("ts"))
    return source, shown, stored if stored != shown else ""


def preview(text: str, limit: int = 90) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def row_kind(row: dict[str, Any]) -> RowKind:
    role = row.get("role")
    if not isinstance(role, str):  # a hand-edited list or object: shown, never hashed
        return RowKind.NOTE
    if role == Role.USER:
        return RowKind.USER if is_user_turn(row) else RowKind.NOTE
    if role in {Role.ASSISTANT, Role.MERGED_SUMMARY}:
        return RowKind.ASSISTANT
    if role in TOOL_ROLES:
        return RowKind.TOOL
    return RowKind.ERROR if role == Role.ERROR else RowKind.NOTE


def transcript_items(
    rows: list[dict[str, Any]],
    *,
    after: str = "",
    turns_before: int = 0,
    seen: Counter[str] | None = None,
) -> tuple[list[Item], int]:
    """Display items for the folded rows, and the user turns through them (numbered as the
    summarizer numbers them, so a summary's ``turns 3-5`` link lands right). ``after`` and
    ``turns_before`` continue the ``ts#n`` and turn numbering; ``seen`` (the ts bearers
    before ``rows``, when legacy rows share a ts out of order) replaces ``after``'s."""
    items: list[Item] = []
    seen = Counter(seen or ())
    if after and not seen:
        stamp, nth = parse_cursor(after)
        seen[stamp] = nth
    turn = turns_before
    for row in rows:
        stamp = row_stamp(row)
        seen[stamp] += 1
        cursor = cursor_of(stamp, seen[stamp])
        text = text_of(row.get("content"))
        kind = row_kind(row)
        role = str(row.get("role") or "row")
        label = ROLE_LABELS.get(role, role.replace("_", " ").capitalize())
        if role == Role.USER and kind is RowKind.NOTE:
            label = "Automation" if is_injected(text) else "Empty message"
        meta = row.get("meta")
        command = role == Role.NOTICE and isinstance(meta, dict) and meta.get("kind") == "command"
        if command:
            label = "Command"
        # Tool output and JSON payloads are shown as code, never read as Markdown.
        structured = kind is RowKind.TOOL or command or not isinstance(row.get("content"), str)
        html = render_code(text) if structured else render_block(text)
        at, shown, stored = happened(row)
        item = Item(kind, label, cursor, at, shown, html, stored=stored)
        if kind is RowKind.USER:
            turn += 1
            item.turn = turn
        if kind in {RowKind.TOOL, RowKind.NOTE}:
            item.collapsed = True
            item.preview = preview(text)
        items.append(item)
    return items, turn


def fold_warning(report: FoldReport) -> FoldWarning | None:
    if not report.anomalies:
        return None
    kept = sum(a.kind in KEPT_KINDS for a in report.anomalies)
    lines = [
        {
            "kind": KIND_LABELS.get(a.kind, a.kind),
            "skipped": a.kind not in KEPT_KINDS,
            "file": a.file,
            "offset": a.offset,
        }
        for a in report.anomalies[:50]
    ]
    return FoldWarning(len(report.anomalies) - kept, kept, lines)


def state_chips(states: str) -> list[dict[str, Any]]:
    """``"done,needs-you,done"`` → chips in triage order with counts."""
    counts = Counter(s for s in states.split(",") if s in STATE_LABELS)
    return [
        {"state": state, "label": label, "count": counts[state]}
        for state, label in STATE_LABELS.items()
        if counts[state]
    ]


def panel_intents(intents: object) -> list[Any]:
    """Each intent with its ``state`` derived as the summarizer does, so a summary stored
    before the rule last changed shows the badge the list's filter finds; no list: none."""
    return [
        {**intent, "state": intent_state(intent)} if isinstance(intent, dict) else intent
        for intent in (intents if isinstance(intents, list) else [])
    ]


def panel_texts(body: dict[str, Any]) -> list[str]:
    texts: list[Any] = []
    for intent in body.get("intents") or []:
        if not isinstance(intent, dict):
            continue
        texts += [intent.get("title"), intent.get("initial_intent")]
        texts += intent.get("progress") or []
        for step in intent.get("next_steps") or []:
            if isinstance(step, dict):
                texts += [step.get("what"), step.get("why"), step.get("expect")]
    texts += body.get("constraints") or []
    return [t for t in texts if isinstance(t, str) and t.strip()]


MIN_BAR_SHARE = 0.012  # a one-turn range of a long session still gets a bar a finger can hit


@dataclass(frozen=True, slots=True)
class Bar:
    first: int
    last: int
    x: str
    width: str
    tip: str  # the SVG <title>: what hovering shows

    @property
    def anchor(self) -> str:
        return f"turn-{self.first}"


@dataclass(frozen=True, slots=True)
class Dormant:
    """The stretch between two ranges of one intent: the work waited here."""

    x: str
    width: str


@dataclass(frozen=True, slots=True)
class Lane:
    title: str
    state: str
    label: str  # the state's label (present.STATE_LABELS)
    bars: tuple[Bar, ...]
    dormant: tuple[Dormant, ...]


@dataclass(frozen=True, slots=True)
class Timeline:
    turns: int  # the axis: the session's turns (or the last turn a range names, if later)
    covered: int  # turns the summary covers; later ones are drawn as not summarized yet
    lanes: tuple[Lane, ...]

    @property
    def uncovered_x(self) -> str:
        return _num(self.covered)

    @property
    def uncovered_width(self) -> str:
        return _num(max(0, self.turns - self.covered))


def _num(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _ranges(raw: Any) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, list) or len(item) != 2:
            continue
        a, b = item
        if type(a) is int and type(b) is int and a >= 1 and b >= 1:  # a JSON true is no turn
            found.append((min(a, b), max(a, b)))
    return sorted(found)


def timeline_layout(intents: list[Any], *, turns: int, covered: int | None) -> Timeline | None:
    """None when no intent names a turn."""
    parsed = [
        (intent, spans)
        for intent in intents
        if isinstance(intent, dict) and (spans := _ranges(intent.get("ranges")))
    ]
    if not parsed:
        return None
    axis = max(turns, *(spans[-1][1] for _, spans in parsed))
    least = axis * MIN_BAR_SHARE
    # The order work started in; at one start the longer first, so a nested intent sits
    # right below the one it is nested in.
    parsed.sort(key=lambda pair: (pair[1][0][0], -(pair[1][-1][1] - pair[1][0][0])))
    lanes: list[Lane] = []
    for intent, spans in parsed:
        title = str(intent.get("title") or "Untitled intent")
        state = str(intent.get("state") or "")
        label = STATE_LABELS.get(state, state)
        bars = []
        for first, last in spans:
            width = max(float(last - first + 1), least)
            x = min(float(first - 1), axis - width)
            turns_text = f"turn {first}" if first == last else f"turns {first}\u2013{last}"
            tip = f"{title} — {label}, {turns_text}"
            bars.append(Bar(first, last, _num(x), _num(width), tip))
        dormant = tuple(
            Dormant(_num(prev[1]), _num(nxt[0] - 1 - prev[1]))
            for prev, nxt in pairwise(spans)
            if nxt[0] - 1 > prev[1]
        )
        lanes.append(Lane(title, state, label, tuple(bars), dormant))
    shown = axis if covered is None else max(0, min(covered, axis))
    return Timeline(axis, shown, tuple(lanes))
