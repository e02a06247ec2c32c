"""The transcript's tool calls, results and automation rows as facts, read by the
heuristic's tool-row rules (``heuristic/evidence.py``), each with a reference the checks
resolve against the same index: what the model was shown and what is checked cannot drift
apart. ``U<n>`` is the person's turn n, ``F<n>.<k>`` the k-th fact after it (``n`` 0
before the first), in session numbers, so a reference reads the same in a windowed pass
and a full one.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .heuristic.evidence import DISCARDED, notification_verdict, tool_sentences_at
from .transcript_turn import ToolRow, TranscriptTurn

STRUCTURE_SHARE = 4  # the index's share of the prompt: the turns get the rest of the input budget
_CMD_CHARS = 120
_OUT_CHARS = 60  # head and tail of an output with nothing better to say


class FactKind(enum.Enum):
    CHANGE = "change"
    CHECK_PASSED = "check_passed"
    CHECK_FAILED = "check_failed"
    COMMIT = "commit"
    PUSH = "push"
    PR_OPENED = "pr_opened"
    MERGE = "merge"
    DEPLOY = "deploy"
    DISCARD = "discard"


# The heuristic's evidence sentences, read as fact kinds.
_SENTENCE_KINDS: tuple[tuple[re.Pattern[str], FactKind | None], ...] = (
    (re.compile(r"Changed\b"), FactKind.CHANGE),
    # A failed deploy or publish is no check of the work (a missing credential, a
    # registry refusing): it closes nothing and verifies nothing.
    (re.compile(r"The deploy failed\.$"), None),
    # Anchored at the start (they are used with match): from anywhere else they fail at
    # once, so a long sentence costs one scan (tests/test_pattern_linearity.py).
    (re.compile(r"\A(?:.*\bpassed\.|The run passed\.)$"), FactKind.CHECK_PASSED),
    (re.compile(r"\A.*\bfailed\.$"), FactKind.CHECK_FAILED),
    (re.compile(r"Committed\.$"), FactKind.COMMIT),
    (re.compile(r"Pushed\.$|Tagged\b"), FactKind.PUSH),
    (re.compile(r"Opened PR\b"), FactKind.PR_OPENED),
    (re.compile(r"Merged PR\b"), FactKind.MERGE),
    (re.compile(r"Deployed\.$|Published\.$"), FactKind.DEPLOY),
    (re.compile(re.escape(DISCARDED)), FactKind.DISCARD),
)
CLOSING = frozenset(
    {FactKind.COMMIT, FactKind.PUSH, FactKind.PR_OPENED, FactKind.MERGE, FactKind.DEPLOY}
)
CHECKS = frozenset({FactKind.CHECK_PASSED, FactKind.CHECK_FAILED})

# An edit whose target is a document (the heuristic's rule: nothing to run after it).
_DOC_TARGET = re.compile(
    r"^\s*(?:(?:edit|write|create)\s+)?(?:\S*/)?(?:[\w.-]+\.(?:md|rst|txt|adoc)|README\w*|CHANGELOG\w*)"
    r"(?=[\s:]|$)",
    re.IGNORECASE,
)
_TALLY = re.compile(
    r"\b\d+ (?:failed|passed|errors?|error\(s\)|skipped|xfailed|xpassed|warnings?|failures?)\b"
)
_HASH = re.compile(r"^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\]", re.MULTILINE)
# Entered only where a URL starts, not inside another (a run of "http://" is one start).
_URL = re.compile(r"(?<![\w/:.])https?://\S+/(?:pull|merge_requests)/\d+")
_HTTP = re.compile(r"^HTTP/[\d.]+ \d{3}\b.*$", re.MULTILINE)


def kinds_of(sentences: Sequence[str]) -> frozenset[FactKind]:
    # A sentence's first matching pattern decides its kind (None: it counts as nothing).
    firsts = (next((k for p, k in _SENTENCE_KINDS if p.match(s)), None) for s in sentences)
    return frozenset(kind for kind in firsts if kind is not None)


@dataclass(frozen=True, slots=True)
class Fact:
    """One row the model may cite: a tool result (with its call), an automation row."""

    ref: str  # "F12.3"
    turn: int  # the person's turn it follows (0: before the first)
    order: int  # position in the session, for "after the last change"
    ts: str | None  # the row that showed it (a tool call's result row)
    kinds: frozenset[FactKind]
    line: str  # what the model reads (after the reference)
    said: tuple[str, ...]  # the heuristic's sentences for it ("Tests failed.")
    text: str  # the row's own text (a quote must be in it, or in ``said``)
    automation: bool = False
    docs_only: bool = False  # a change to documents only: nothing to run after it
    # A command that ran to success and only looks at the work (a build, a runner the
    # heuristic does not name, a smoke script): a check when the reply cites it.
    ran_ok: bool = False


@dataclass(frozen=True, slots=True)
class UserRow:
    turn: int
    order: int
    ts: str | None
    text: str


@dataclass(slots=True)
class StructureIndex:
    """Every citable row of the turns, by reference and by ts."""

    facts: list[Fact] = field(default_factory=list)
    by_ref: dict[str, Fact] = field(default_factory=dict)
    users: dict[int, UserRow] = field(default_factory=dict)
    # ts -> (order, turn, citable text) for every kept row, the assistant's too: the
    # heuristic cites rows by ts
    by_ts: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def add_fact(self, fact: Fact) -> None:
        self.facts.append(fact)
        self.by_ref[fact.ref] = fact

    def span(self, turns: frozenset[int]) -> list[Fact]:
        return [f for f in self.facts if f.turn in turns]


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _outcome(result: ToolRow) -> str:
    out = result.text
    parts: list[str] = []
    if result.exit_code is not None:
        parts.append(f"exit {result.exit_code}")
    if tally := list(dict.fromkeys(m.group(0) for m in _TALLY.finditer(out))):
        parts.append(", ".join(tally[-4:]))
    if commit := _HASH.search(out):
        parts.append(f"commit {commit.group(1)}")
    if url := _URL.search(out):
        parts.append(url.group(0))
    if http := _HTTP.findall(out):
        parts.append(_one_line(http[-1], 40))
    if len(parts) <= (result.exit_code is not None) and out.strip():
        flat = " ".join(out.split())
        cut = len(flat) > 2 * _OUT_CHARS
        parts.append(f"out: {flat[:_OUT_CHARS]} … {flat[-_OUT_CHARS:]}" if cut else f"out: {flat}")
    return "; ".join(parts)


def _tool_line(call: ToolRow | None, result: ToolRow, said: Sequence[str]) -> str:
    tool = result.tool or (call.tool if call is not None else None) or "tool"
    if result.kind == "tool":  # legacy free text: the row is both call and result
        line = f"{tool}: {_one_line(result.text, _CMD_CHARS)}"
    else:
        what = _one_line(call.text, _CMD_CHARS) if call is not None else ""
        outcome = _outcome(result)
        line = (f"{tool}: {what}" if what else tool) + (f" -> {outcome}" if outcome else "")
    return line + (f" => {' '.join(said)}" if said else "")


def build_index(turns: Sequence[TranscriptTurn]) -> StructureIndex:
    index = StructureIndex()
    edited: set[str] = set()
    current = 0
    seq: dict[int, int] = {}
    order = 0

    def add(ts: str | None, turn: int, text: str) -> None:
        if ts:
            index.by_ts.setdefault(ts, (order, turn, text))

    def new_ref() -> str:
        seq[current] = seq.get(current, 0) + 1
        return f"F{current}.{seq[current]}"

    for turn in turns:
        order += 1
        if turn.user_turn is not None:
            current = turn.user_turn
            index.users[current] = UserRow(current, order, turn.ts, turn.text)
            add(turn.ts, current, turn.text)
        elif turn.injected:
            verdict = notification_verdict(turn.text)
            said: tuple[str, ...] = (verdict,) if verdict else ()
            line = f"automation (not the person): {_one_line(turn.text, 160)}"
            line += f" => {verdict}" if verdict else ""
            kinds = kinds_of(said)
            index.add_fact(
                Fact(new_ref(), current, order, turn.ts, kinds, line, said, turn.text, True)
            )
            add(turn.ts, current, f"{turn.text}\n{verdict or ''}")
        else:
            add(turn.ts, current, turn.text)
        call: ToolRow | None = None
        for row in turn.tools:
            order += 1
            if row.kind == "call":
                if call is not None:  # a call whose result never came: it may never have run
                    index.add_fact(_unanswered(new_ref(), current, order, call))
                call = row
                continue
            pair = [row] if call is None else [call, row]
            said = tuple(s for s, _ in tool_sentences_at(pair, edited))
            text = f"{call.text if call else ''}\n{row.text}"
            kinds = kinds_of(said)
            docs = FactKind.CHANGE in kinds and bool(_DOC_TARGET.match(call.text if call else ""))
            fact = Fact(
                new_ref(),
                current,
                order,
                row.ts or (call.ts if call else None),
                kinds,
                _tool_line(call, row, said),
                said,
                text,
                docs_only=docs,
                ran_ok=_ran_ok(call, row, kinds),
            )
            index.add_fact(fact)
            add(fact.ts, current, f"{text}\n{' '.join(said)}")
            call = None
        if call is not None:
            order += 1
            index.add_fact(_unanswered(new_ref(), current, order, call))
    return index


# Commands that read, change or ship rather than exercise the work: never a check.
_NOT_A_CHECK = re.compile(
    r"^\s*(?:grep|rg|cat|less|head|tail|ls|find|echo|wc|diff|cd|pwd|which|env|export"
    r"|mkdir|touch|rm|mv|cp|chmod|chown|ln|sed|awk|tee|git|gh|glab|vim?|nano|open)\b"
    r"|\b(?:install|add|up|upgrade|update|remove|uninstall|publish|push|deploy|apply)\b",
    re.IGNORECASE,
)
_TALLY_FAILED = re.compile(r"\b[1-9]\d* (?:failed|errors?|error\(s\)|failures?)\b")


def _ran_ok(call: ToolRow | None, result: ToolRow, kinds: frozenset[FactKind]) -> bool:
    if call is None or result.exit_code != 0 or kinds - {FactKind.CHECK_PASSED}:
        return False
    command = " ".join(call.text.split())
    return (
        bool(command) and not _NOT_A_CHECK.search(command) and not _TALLY_FAILED.search(result.text)
    )


def _unanswered(ref: str, turn: int, order: int, call: ToolRow) -> Fact:
    line = f"{call.tool or 'tool'}: {_one_line(call.text, _CMD_CHARS)} -> no result"
    return Fact(ref, turn, order, call.ts, frozenset(), line, (), call.text)


def render_structure(index: StructureIndex, max_chars: int) -> str:
    """The facts as lines (``F3.2 bash: pytest -> exit 1; 2 failed => Tests failed.``),
    at most ``max_chars``: over budget, facts that say nothing are cut first, then other
    changes and checks, oldest first; the last change and last check of each turn go last."""
    lines = {f.ref: f"{f.ref} {f.line}" for f in index.facts}
    if not lines:
        return ""
    total = sum(len(v) + 1 for v in lines.values())
    if total <= max_chars:
        return "\n".join(lines.values())
    # Cut last: per turn its last change and last check, and every commit, push, PR,
    # merge, deploy, discard and automation verdict.
    facts = index.facts
    closing = CLOSING | {FactKind.DISCARD}
    essential = {f.ref for f in facts if f.kinds & closing or (f.automation and f.kinds)}
    essential.update({f.turn: f.ref for f in facts if FactKind.CHANGE in f.kinds}.values())
    essential.update({f.turn: f.ref for f in facts if f.kinds & CHECKS}.values())
    dropped: set[str] = set()
    reserve = 60  # the omission line
    for level in (0, 1, 2):
        for f in index.facts:  # oldest first
            if total + reserve <= max_chars:
                break
            if (2 if f.ref in essential else 1 if f.kinds else 0) == level:
                dropped.add(f.ref)
                total -= len(lines[f.ref]) + 1
    kept = [lines[f.ref] for f in index.facts if f.ref not in dropped]
    if dropped:
        kept.insert(0, f"[... {len(dropped)} less telling facts omitted ...]")
    return "\n".join(kept)
