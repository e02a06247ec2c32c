"""A model reply's one way to a storable summary: find its JSON, merge an incremental
update, check, normalize. The pass and the quality bench's replay both call
:func:`shape_reply`, so a replayed reply is scored through the path a live one is stored."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .checks import check_reply
from .extract import count_user_turns
from .intents import SummaryChecks, SummaryPayload
from .payload import normalize_payload
from .structure import build_index
from .transcript_turn import TranscriptTurn

logger = logging.getLogger(__name__)

_decoder = json.JSONDecoder()
# A reply is bounded by the model's output limit; this only stops a pathological one
# (say, 100k opening brackets) from turning the scan quadratic.
MAX_SCAN_STARTS = 20_000


def _scan(text: str) -> dict[str, Any] | None:
    payloads: list[dict[str, Any]] = []
    first_dict: dict[str, Any] | None = None
    pos = 0
    starts = 0
    while starts < MAX_SCAN_STARTS:
        brace, bracket = text.find("{", pos), text.find("[", pos)
        candidates = [i for i in (brace, bracket) if i >= 0]
        if not candidates:
            break
        start = min(candidates)
        starts += 1
        try:
            value, end = _decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1  # a stray "{placeholder}" or a prose "[x]": keep looking
            continue
        except RecursionError:
            # Starts inside a run of one bracket nest nearly as deep; skip the whole run.
            pos = start + 1
            while pos < len(text) and text[pos] == text[start]:
                pos += 1
            continue
        # Payload-shaped dicts inside a decoded wrapper (``[{...}]``, ``{"result": {...}}``).
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict) and isinstance(item.get("intents"), list):
                payloads.append(item)
            elif isinstance(item, dict | list):
                stack.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
        if first_dict is None and isinstance(value, dict):
            first_dict = value
        # Skip past anything decoded: its inner braces belong to it, not to new
        # candidates (an intent dict is not a second payload).
        pos = end
    if not payloads:
        return first_dict
    chosen = payloads[0]
    if any(other != chosen for other in payloads[1:]):
        # Two different answers in one reply: refuse to guess which one the model meant.
        logger.info("summary reply holds %d different payloads; refusing", len(payloads))
        return None
    return chosen


def parse_reply(text: object) -> dict[str, Any] | None:
    """The reply's payload dict, or None for empty, garbage or ambiguous replies. Never
    raises: a lost summary must not surface as a failed turn."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return _scan(text)
    except Exception:  # RecursionError in == on deep values, MemoryError aside
        logger.warning("summary reply could not be parsed", exc_info=True)
        return None


def merge_update(raw: object, previous: SummaryPayload) -> object:
    """An incremental reply (``prompt.build_incremental_prompt``) as a whole payload: an
    intent given as ``{"id": n}`` is the previous intent n unchanged (its evidence is
    checked again with the rest), one with an id and fields replaces those fields, one
    without an id is new; a previous intent the reply leaves out is kept, as are the
    previous constraints when the reply has none."""
    if not isinstance(raw, dict) or not isinstance(raw.get("intents"), list):
        return raw
    before = [i.model_dump(mode="json") for i in previous.intents]

    def ref_of(item: object) -> int | None:
        ref = item.get("id") if isinstance(item, dict) else None
        return ref if type(ref) is int and 1 <= ref <= len(before) else None

    def said(item: object) -> bool:
        title = item.get("title") if isinstance(item, dict) else None
        return ref_of(item) is not None or (isinstance(title, str) and bool(title.strip()))

    if not any(said(item) for item in raw["intents"]):
        return raw  # nothing kept, changed or new: as unusable as in a full pass
    seen: set[int] = set()
    intents: list[object] = []
    for item in raw["intents"]:
        if not isinstance(item, dict):
            intents.append(item)
            continue
        ref, fields = ref_of(item), {k: v for k, v in item.items() if k != "id"}
        if ref is None or ref in seen:
            intents.append(fields)
            continue
        seen.add(ref)
        # Changed: what it said before no longer decides its state.
        intents.append(
            {**before[ref - 1], "evidence": None, **fields} if fields else before[ref - 1]
        )
    intents += [b for n, b in enumerate(before, start=1) if n not in seen]
    constraints = raw.get("constraints")
    return {
        **raw,
        "intents": intents,
        "constraints": constraints if isinstance(constraints, list) else previous.constraints,
    }


@dataclass(frozen=True, slots=True)
class Shaped:
    payload: SummaryPayload | None  # None: nothing usable, keep the previous summary
    checks: SummaryChecks


def shape_reply(
    reply: object,
    turns: Sequence[TranscriptTurn],
    *,
    user_turns: int | None = None,
    max_intents: int = 50,
    max_constraints: int = 50,
    previous: SummaryPayload | None = None,
) -> Shaped:
    """``reply`` (the backend's raw text) checked against ``turns`` and shaped. With
    ``previous`` it answers the incremental prompt: merged first, then checked whole (its
    constraints known to the checks)."""
    total = count_user_turns(turns) if user_turns is None else user_turns
    raw: object = parse_reply(reply)
    known: frozenset[str] = frozenset()
    if previous is not None:
        raw = merge_update(raw, previous)
        known = frozenset(previous.constraints)
    checked, report = check_reply(
        raw, build_index(turns), user_turns=total, known_constraints=known
    )
    shaped = normalize_payload(checked, max_intents=max_intents, max_constraints=max_constraints)
    return Shaped(None if shaped is None else shaped.model_copy(update={"checks": report}), report)
