"""Reads of summaries. GET never generates; freshness is one stat, never a transcript read."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from transcripts.models import App, Session, Slot
from transcripts.selectors import session_list
from transcripts.store import get_store

from .core.gate import generate_state
from .core.sidecar import INTENTS, read_for_panel
from .runtime import summary_config
from .services import slot_view


def _empty(enabled: bool) -> dict[str, Any]:
    return {
        "enabled": enabled,
        "stale": False,
        "intents": [],
        "constraints": [],
        "generated_at": None,
        "user_turns": None,
        "last_activity": None,
        "covers_through_turn": None,
        "new_turns": None,
        "model": None,
    }


def summary_body(slot: Slot) -> dict[str, Any]:
    """The GET/POST body. With the feature off nothing is served, even if a sidecar exists."""
    cfg = summary_config()
    body = _empty(cfg.enabled)
    user_turns_now = slot.session.user_turns
    body["generate_state"] = generate_state(cfg, slot_view(slot), user_turns_now)
    if not cfg.enabled:
        return body
    data, stale = read_for_panel(get_store(), slot.session.key, INTENTS)
    if data is None:
        return body
    covers = data.get("user_turns") if type(data.get("user_turns")) is int else None
    body.update(
        stale=stale,
        intents=data.get("intents") or [],
        constraints=data.get("constraints") if isinstance(data.get("constraints"), list) else [],
        generated_at=data.get("generated_at"),
        user_turns=covers,
        last_activity=data.get("last_activity"),
        covers_through_turn=covers,
        new_turns=max(0, user_turns_now - covers) if covers is not None else None,
        model=data.get("model"),
    )
    return body


def slot_list_with_gist(*, scope: App | str) -> QuerySet[Session]:
    """Own sessions newest activity first, with their one-line summary joined."""
    return session_list(app=scope if isinstance(scope, App) else "").select_related(
        "one_line_summary"
    )
