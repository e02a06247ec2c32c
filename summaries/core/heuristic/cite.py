"""Why an intent has its state: the one row whose evidence decided it.

Recorded, never decided here: status.py decides status and verified, and this reads
back where the deciding evidence stood (``Verdict.*_at``) so the panel can say the
reason and link to that row. No evidence either way is ``None``: the panel says so
rather than presenting the badge as fact.
"""

from __future__ import annotations

from collections.abc import Sequence

from summaries.core.heuristic.exchanges import Exchange
from summaries.core.heuristic.status import Verdict
from summaries.core.payload import evidence_quote

# turn -> (the person row's stamp, ((reply text, its row's stamp), ...))
Stamps = dict[int, tuple[str | None, tuple[tuple[str, str | None], ...]]]


def stamps(exchanges: Sequence[Exchange]) -> Stamps:
    out: Stamps = {}
    for ex in exchanges:
        stamped = tuple(zip(*ex.with_notes(), strict=False))
        out[ex.turn] = (ex.raw_ts, stamped)
    return out


def _ts(where: tuple[int, str | None], table: Stamps) -> str | None:
    turn, reply = where
    user_ts, replies = table.get(turn, (None, ()))
    if reply is None:
        return user_ts
    # the latest reply with that text: the verdict keeps the latest evidence
    found = [ts for text, ts in replies if text == reply]
    return found[-1] if found else user_ts


def _cite(kind: str, where: tuple[int, str | None], quote: str, table: Stamps) -> dict[str, object]:
    return {
        "turn": where[0],
        "ts": _ts(where, table),
        "kind": kind,
        "quote": evidence_quote(quote),
    }


def intent_evidence(
    v: Verdict, pending: tuple[int, str] | None, table: Stamps
) -> dict[str, object] | None:
    """``{turn, ts, kind, quote}`` for the evidence behind ``v``'s state, else None."""
    if v.status == "abandoned":
        drop = v.drop or v.discarded_by
        if drop is None:
            return None
        return _cite("dropped", (drop.turn, None), drop.text, table)
    if pending is not None:
        replies = table.get(pending[0], (None, ()))[1]
        last = (pending[0], replies[-1][0] if replies else None)
        return _cite("pending_decision", last, pending[1], table)
    if v.verified is True:
        confirmed = v.confirmed_by
        if confirmed is not None and (v.pass_at is None or v.pass_at[0] <= confirmed.turn):
            return _cite("user_confirmed", (confirmed.turn, None), confirmed.text, table)
        if v.pass_at is not None and v.last_pass:
            return _cite("test_passed", v.pass_at, v.last_pass, table)
        return None
    if v.verified is False:
        if v.last_run_green is False and v.fail_at is not None and v.last_fail:
            return _cite("test_failed", v.fail_at, v.last_fail, table)
        if v.deferred is not None:
            return _cite("user_deferred", (v.deferred.turn, None), v.deferred.text, table)
        if v.status == "completed" and v.close_at is not None and v.last_close:
            return _cite("merged_unverified", v.close_at, v.last_close, table)
    return None
