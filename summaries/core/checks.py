"""Checks every reply passes before it is stored, whichever backend wrote it: a summary is
read instead of the transcript, so every claim needs its row (a line telling the model to
"mark everything done" changes nothing). What they did is counted (``SummaryChecks``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .heuristic.words import STOPWORDS, content_words
from .intents import SummaryChecks
from .payload import evidence_quote, is_json_int, range_pairs
from .structure import CHECKS, CLOSING, Fact, FactKind, StructureIndex, UserRow

TITLE_MAX = 80
# Evidence kinds that say nothing passed: they survive a downgrade of ``verified``.
_NOT_VERIFIED = frozenset(
    {"test_failed", "merged_unverified", "dropped", "user_deferred", "pending_decision"}
)
_REF = re.compile(r"^\s*([UF])(\d+)(?:\.(\d+))?\s*$", re.IGNORECASE)
# Tokens that name something exactly (a flag, a path, a version): one shared is support.
_WORD = re.compile(r"[a-z0-9][a-z0-9_-]*")
# A token starts where its run starts (not inside a run of its own characters), so a long
# run is scanned once (tests/test_pattern_linearity.py).
_EXACT = re.compile(r"(?<![\w./:=@-])(?:--?[\w-]{2,}|[\w.-]*[/.:=@][\w./:=@-]+|\w*\d\w*)")


def cut_title(title: str) -> str:
    flat = " ".join(title.split())
    if len(flat) <= TITLE_MAX:
        return flat
    head = flat[: TITLE_MAX + 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else flat[:TITLE_MAX]
    return cut[:TITLE_MAX].rstrip(" ,;:-")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _quoted_in(quote: str, text: str) -> bool:
    q = _norm(quote).rstrip(".…")
    return bool(q) and q in _norm(text)


def supports(turn_text: str, claim: str) -> bool:
    """An exact token of ``claim`` (a flag, a path, a version) or half its content words
    are in a person's words."""
    said = content_words(turn_text)
    words = content_words(claim)
    if not words:
        return False
    exact = {t.casefold() for t in _EXACT.findall(claim) if len(t) >= 3}
    low = turn_text.casefold()
    if any(t in low for t in exact):
        return True
    if len(words & said) >= max(1, math.ceil(len(words) / 2)):
        return True
    # Short names count as words here ("uv", "k8s"): tools are often named that briefly.
    named = {t for t in _WORD.findall(claim.casefold()) if t not in STOPWORDS}
    return len(named) >= 2 and len(named & set(_WORD.findall(low))) * 2 >= len(named)


@dataclass(slots=True)
class _Cited:
    facts: list[Fact] = field(default_factory=list)
    users: list[UserRow] = field(default_factory=list)
    prose: list[tuple[int, int, str, str]] = field(default_factory=list)  # order, turn, ts, text


class _Checker:
    def __init__(self, index: StructureIndex, total: int, known: frozenset[str]) -> None:
        self.index = index
        self.total = total
        self.known = known
        self.report = SummaryChecks()

    def count(self, name: str) -> None:
        setattr(self.report, name, getattr(self.report, name) + 1)

    def cite(self, cites: object, evidence: object) -> _Cited:
        found = _Cited()
        for item in cites if isinstance(cites, list) else []:
            pair = (item.get("ref"), item.get("quote")) if isinstance(item, dict) else (item, None)
            if not self._resolve(*pair, found):
                self.count("citations_dropped")
        if isinstance(evidence, dict) and not self._by_ts(evidence, found):
            self.count("citations_dropped")
        return found

    def _resolve(self, ref: object, quote: object, found: _Cited) -> bool:
        m = _REF.match(ref) if isinstance(ref, str) else None
        if m is None:
            return False
        kind, turn = m.group(1).upper(), int(m.group(2))
        if kind == "U":
            user = self.index.users.get(turn) if m.group(3) is None else None
            if user is None or (isinstance(quote, str) and not _quoted_in(quote, user.text)):
                return False
            found.users.append(user)
            return True
        fact = self.index.by_ref.get(f"F{turn}.{m.group(3)}") if m.group(3) else None
        if fact is None or (
            isinstance(quote, str)
            and not _quoted_in(quote, fact.text + "\n" + " ".join(fact.said) + "\n" + fact.line)
        ):
            return False
        found.facts.append(fact)
        return True

    def _by_ts(self, evidence: dict[str, Any], found: _Cited) -> bool:
        ts, quote = evidence.get("ts"), evidence.get("quote")
        if not isinstance(ts, str) or not isinstance(quote, str):
            return False
        row = self.index.by_ts.get(ts)
        if row is None:
            return False
        order, turn, text = row
        fact = next((f for f in self.index.facts if f.ts == ts), None)
        # Evidence the checks wrote quotes the fact's line (``_evidence``): a stored
        # summary checked again (an incremental pass keeps unchanged intents) must hold.
        if not _quoted_in(quote, text if fact is None else f"{text}\n{fact.line}"):
            return False
        user = self.index.users.get(turn)
        if fact is not None:
            found.facts.append(fact)
        elif user is not None and user.ts == ts:
            found.users.append(user)
        else:
            found.prose.append((order, turn, ts, str(evidence.get("kind") or "")))
        return True

    def intent(self, raw: dict[str, Any]) -> dict[str, Any] | None:
        out = dict(raw)
        title = raw.get("title")
        if isinstance(title, str) and len(" ".join(title.split())) > TITLE_MAX:
            out["title"] = cut_title(title)
            self.count("titles_cut")
        pairs = list(range_pairs(raw.get("ranges")))
        ranges: list[list[int]] = []
        for start, end in pairs:  # cut to [1, total]
            lo, hi = max(1, start), min(self.total, end)
            if (lo, hi) != (start, end):
                self.count("ranges_clipped")
            if lo <= hi:
                ranges.append([lo, hi])
        if pairs and not ranges:
            self.count("intents_dropped")
            return None
        out["ranges"] = ranges
        origin = raw.get("origin_turn")
        if is_json_int(origin) and not 1 <= origin <= self.total:
            out["origin_turn"] = None
            self.count("origins_cleared")
        cited = self.cite(raw.get("cites"), raw.get("evidence"))
        out.pop("cites", None)
        turns = frozenset(t for lo, hi in ranges for t in range(lo, hi + 1))
        self._verify(out, turns, cited)
        return out

    def _verify(self, out: dict[str, Any], turns: frozenset[int], cited: _Cited) -> None:
        span = self.index.span(turns)
        changes = [f.order for f in span if FactKind.CHANGE in f.kinds and not f.docs_only]
        since = max(changes, default=0)
        # The session's own runs: an automation row in the span may report on other work
        # (a nightly job, a cron), so it can be cited but does not overrule.
        runs = [f for f in span if f.kinds & CHECKS and f.order > since and not f.automation]
        last_run = runs[-1] if runs else None
        red = last_run is not None and FactKind.CHECK_FAILED in last_run.kinds
        passes = [
            f
            for f in cited.facts
            if (FactKind.CHECK_PASSED in f.kinds or f.ran_ok)
            and FactKind.CHECK_FAILED not in f.kinds
            and f.order > since
            and (last_run is None or f.order >= last_run.order or not red)
        ]
        # The person confirms after asking: the turn that opened the work is no verdict.
        opened = min(turns, default=0)
        confirms = [u for u in cited.users if u.order > since and opened < u.turn in turns]
        # An assistant's "tests pass" after the last change counts while no tool row
        # contradicts it: a red run is handled above, whatever the prose says.
        prose = [p for p in cited.prose if p[3] == "test_passed" and p[0] > since]
        verified = out.get("verified")
        evidence = out.get("evidence")
        if red and last_run is not None and out.get("status") != "abandoned":
            # Whatever the reply cites: a person's turn after a red run is not a pass.
            if verified is not False:
                self.count("structure_overrides")
            out["verified"] = False
            out["evidence"] = _evidence(last_run, "test_failed")
            return
        if verified is True:
            if confirms and (not passes or confirms[-1].order > passes[-1].order):
                out["evidence"] = _user_evidence(confirms[-1], "user_confirmed")
            elif passes:
                out["evidence"] = _evidence(passes[-1], "test_passed")
            elif prose and isinstance(evidence, dict):
                pass  # the heuristic's own evidence, already checked against its row
            else:
                self.count("verified_downgraded")
                touched = changes or any(f.kinds & CLOSING for f in span)
                out["verified"] = False if touched else None
                kept = isinstance(evidence, dict) and evidence.get("kind") in _NOT_VERIFIED
                out["evidence"] = evidence if kept else self._fallback(out, span, cited)
            return
        valid = isinstance(evidence, dict) and (cited.facts or cited.users or cited.prose)
        out["evidence"] = evidence if valid else self._fallback(out, span, cited)

    def _fallback(self, out: dict[str, Any], span: list[Fact], cited: _Cited) -> object:
        if out.get("status") == "abandoned":
            discard = next((f for f in reversed(cited.facts) if FactKind.DISCARD in f.kinds), None)
            if discard is not None:
                return _evidence(discard, "dropped")
            return _user_evidence(cited.users[-1], "dropped") if cited.users else None
        if out.get("verified") is False and out.get("status") == "completed":
            for f in reversed(cited.facts):
                if f.kinds & CLOSING:
                    return _evidence(f, "merged_unverified")
        return None

    def constraint(self, item: object) -> str | None:
        text, cite = (
            (item.get("text"), item.get("cite")) if isinstance(item, dict) else (item, None)
        )
        if not isinstance(text, str) or not text.strip():
            return None
        m = _REF.match(cite) if isinstance(cite, str) else None
        cited = self.index.users.get(int(m.group(2))) if m and m.group(1).upper() == "U" else None
        rows = [cited] if cited is not None else []
        rows += [u for u in self.index.users.values() if u is not cited]
        if any(supports(u.text, text) for u in rows) or text.strip() in self.known:
            return text
        self.count("constraints_dropped")
        return None


def _evidence(fact: Fact, kind: str) -> dict[str, Any] | None:
    if fact.turn < 1:
        return None
    quote = " ".join(fact.said) if fact.said else fact.line
    return {"turn": fact.turn, "ts": fact.ts, "kind": kind, "quote": evidence_quote(quote)}


def _user_evidence(user: UserRow, kind: str) -> dict[str, Any]:
    return {"turn": user.turn, "ts": user.ts, "kind": kind, "quote": evidence_quote(user.text)}


def check_reply(
    raw: object,
    index: StructureIndex,
    *,
    user_turns: int,
    known_constraints: frozenset[str] = frozenset(),
) -> tuple[object, SummaryChecks]:
    """``known_constraints``: the previous summary's (a windowed pass no longer holds the
    turn that stated them)."""
    checker = _Checker(index, user_turns, known_constraints)
    if not isinstance(raw, dict):
        return raw, checker.report
    out = dict(raw)
    items = raw.get("intents")
    if isinstance(items, list):
        kept = []
        for item in items:
            if not isinstance(item, dict):
                kept.append(item)  # the normalizer drops it
                continue
            if (checked := checker.intent(item)) is not None:
                kept.append(checked)
        out["intents"] = kept
    notes = raw.get("constraints")
    if isinstance(notes, list):
        out["constraints"] = [c for c in map(checker.constraint, notes) if c is not None]
    return out, checker.report
