"""Shape a parsed model reply into the stored payload: coerce, derive, cap, redact.
Redaction is always the last step: whatever changes case or cuts a string runs before it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, TypeGuard, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from transcripts.core.redaction import redact_payload

from .intents import EvidenceKind, Status, SummaryPayload, derive_state

logger = logging.getLogger(__name__)

STATUSES = frozenset(get_args(Status))
EVIDENCE_KINDS = frozenset(get_args(EvidenceKind))
EVIDENCE_QUOTE_MAX = 120
_EVIDENCE_TS_MAX = 64
_Model = TypeVar("_Model", bound=BaseModel)


def is_json_int(value: object) -> TypeGuard[int]:
    """A JSON integer: true/false are not turn numbers."""
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: object) -> list[str]:
    items = value if isinstance(value, list) else []
    return [s.strip() for s in items if isinstance(s, str) and s.strip()]


def _text(value: object) -> str:
    return str(value or "").strip()


def _next_steps(value: object) -> list[dict[str, str]]:
    steps: list[dict[str, str]] = []
    for item in value if isinstance(value, list) else []:
        step = {"what": item} if isinstance(item, str) else item  # a bare string is its what
        what = step.get("what") if isinstance(step, dict) else None
        if isinstance(what, str) and what.strip():
            why, expect = _text(step.get("why")), _text(step.get("expect"))
            steps.append({"what": what.strip(), "why": why, "expect": expect})
    return steps


def range_pairs(value: object) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of a reply's ranges that are pairs of JSON integers in order;
    a bare turn number is a one-turn range."""
    for item in value if isinstance(value, list) else []:
        pair = [item, item] if is_json_int(item) else item
        if isinstance(pair, list | tuple) and len(pair) == 2:
            start, end = pair
            if is_json_int(start) and is_json_int(end) and start <= end:
                yield start, end


def evidence_quote(text: str) -> str:
    """An evidence quote: one line, cut at a word boundary, redacted before and after the
    cut (the heuristic's citations and a model's evidence alike)."""
    return clip_sealed(" ".join(text.split()), EVIDENCE_QUOTE_MAX)


def evidence_of(value: object) -> dict[str, Any] | None:
    """A valid ``{turn, ts, kind, quote}``, else None: a bad one is dropped, never guessed."""
    if not isinstance(value, dict):
        return None
    turn, ts, kind, quote = (value.get(k) for k in ("turn", "ts", "kind", "quote"))
    known = isinstance(kind, str) and kind in EVIDENCE_KINDS and is_json_int(turn) and turn >= 1
    if not (known and isinstance(quote, str) and quote.strip()):
        return None
    stamp = ts.strip() if isinstance(ts, str) else ""
    return {
        "turn": turn,
        "ts": stamp if 0 < len(stamp) <= _EVIDENCE_TS_MAX else None,
        "kind": kind,
        "quote": evidence_quote(quote),
    }


def _coerce_intent(raw: object) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    status = raw.get("status")
    status = status if isinstance(status, str) and status in STATUSES else "active"
    verified = raw["verified"] if isinstance(raw.get("verified"), bool) else None
    origin = raw.get("origin_turn")
    # Overlaps are kept: nested and resumed intents are real.
    ranges = [[start, end] for start, end in range_pairs(raw.get("ranges")) if start >= 1]
    evidence = evidence_of(raw.get("evidence"))
    return {
        "title": title.strip(),
        "initial_intent": _text(raw.get("initial_intent")),
        "progress": _strings(raw.get("progress")),
        "next_steps": _next_steps(raw.get("next_steps")),
        "ranges": ranges,
        "status": status,
        "verified": verified,
        "state": derive_state(status, verified, evidence["kind"] if evidence else None),
        "last_touched_turn": max((r[-1] for r in ranges), default=0),
        "origin_turn": origin if is_json_int(origin) and origin >= 1 else None,
        "evidence": evidence,
    }


def normalize_payload(
    raw: object, *, max_intents: int = 50, max_constraints: int = 50
) -> SummaryPayload | None:
    """The storable payload, or None when the reply holds no usable intent (the caller
    keeps the previous summary rather than store an empty one)."""
    if not isinstance(raw, dict):
        return None
    items = raw.get("intents") or []
    coerced = [_coerce_intent(x) for x in items] if isinstance(items, list) else []
    intents = [i for i in coerced if i is not None]
    if not intents:
        return None
    # Most recently touched first; list.sort is stable, so ties keep the model's order.
    intents.sort(key=lambda i: i["last_touched_turn"], reverse=True)
    max_intents = max(1, max_intents)
    if len(intents) > max_intents:
        logger.warning(
            "session summary: dropping %d of %d intents at the max_intents rail (%d); "
            "they are absent from the stored summary, not collapsed in the panel",
            len(intents) - max_intents,
            len(intents),
            max_intents,
        )
        intents = intents[:max_intents]

    constraints = _strings(raw.get("constraints"))
    max_constraints = max(0, max_constraints)
    if len(constraints) > max_constraints:
        if max_constraints:  # 0 means "no notes section": suppressing it is not news
            logger.warning(
                "session summary: dropping %d of %d project notes at the max_constraints rail (%d)",
                len(constraints) - max_constraints,
                len(constraints),
                max_constraints,
            )
        constraints = constraints[:max_constraints]

    # The payload echoes transcript text and a sidecar is durable: redact every string,
    # however deeply nested, before anything can store it. After the backend's shaping
    # (capitals, clipping) and the strip above, so no later step revives a secret.
    redacted = seal_payload({"intents": intents, "constraints": constraints})
    try:
        # Types only: every string stays exactly as sealed (the model shapes no text).
        return SummaryPayload.model_validate(redacted)
    except ValidationError:
        logger.warning("session summary: the shaped reply does not fit the payload model")
        return None


def seal_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with every string in it redacted (keys too), right before a sidecar,
    the mirror or an answer stores it. Idempotent, so the pass seals the whole stored
    payload once more after adding its own fields."""
    sealed, report = redact_payload(payload)
    if report:
        logger.info("session summary: redacted %s", report)
    return sealed if isinstance(sealed, dict) else {}


def seal_model(model: _Model) -> _Model:
    """:func:`seal_payload` of ``model``'s dump, read back (validation changes no string)."""
    return type(model).model_validate(seal_payload(model.model_dump(mode="json")))


def clip_sealed(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, on whitespace when there is any, redacted
    before the cut (it can split a secret so that no pattern matches the half left) and
    after it (a shorter string can meet a pattern's boundary the longer one did not)."""
    clean = _redacted(text)
    if len(clean) <= limit:
        return clean
    cut = clean[: max(0, limit)]
    if cut and not cut[-1].isspace() and not clean[len(cut)].isspace():
        head = cut.rsplit(None, 1)
        if len(head) == 2:  # one giant token has no boundary: cut hard, redact again
            cut = head[0]
    return _redacted(cut.rstrip())


def _redacted(text: str) -> str:
    out = redact_payload(text)[0]
    return out if isinstance(out, str) else ""
