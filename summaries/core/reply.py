"""Find the JSON payload in a model reply that may wrap it in fences or prose."""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

_decoder = json.JSONDecoder()
# A reply is bounded by the model's output limit; this only stops a pathological one
# (say, 100k opening brackets) from turning the scan quadratic.
MAX_SCAN_STARTS = 20_000


def _payloads_in(value: object, out: list[dict[str, Any]]) -> None:
    """Payload-shaped dicts inside a decoded wrapper (``[{...}]``, ``{"result": {...}}``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("intents"), list):
                out.append(item)
            else:
                stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


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
        found: list[dict[str, Any]] = []
        _payloads_in(value, found)
        payloads.extend(found)
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
    """The reply's payload dict, or None for empty, garbage or ambiguous replies.

    Never raises: a lost summary must not surface as a failed turn.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return _scan(text)
    except Exception:  # RecursionError in == on deep values, MemoryError aside
        logger.warning("summary reply could not be parsed", exc_info=True)
        return None
