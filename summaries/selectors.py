"""Reads of summaries. GET never generates; freshness is one stat, never a transcript read."""

from __future__ import annotations

from typing import Any

from django.db import connections, router
from django.db.models import Exists, F, Field, OuterRef, Q
from django.db.models.functions import Coalesce

from transcripts.models import Session, Slot
from transcripts.runtime import get_store

from .core.gate import CLEAN_STOP, SlotView, generate_state, is_restricted
from .core.sidecar import summary_for_panel
from .models import IntentSummary, SummaryState
from .runtime import summary_config
from .state import pass_pending, summary_turn_mark


def summary_behind(*, moved: bool, user_turns_now: int, covers: int | None) -> bool:
    """Whether a stored summary is behind the conversation: the transcript moved AND a turn
    came or went (a revision or metadata edit moves only the transcript). A summary that
    does not say what it covers goes by the move."""
    return moved and (covers is None or user_turns_now != covers)


def summary_body(slot: Slot) -> dict[str, Any]:
    """The GET/POST body. With the feature off nothing is served, even if a sidecar exists."""
    cfg = summary_config()
    user_turns_now = slot.session.user_turns
    body: dict[str, Any] = {
        "enabled": cfg.enabled,
        "stale": False,
        "intents": [],
        "constraints": [],
        **dict.fromkeys(
            ("generated_at", "user_turns", "last_activity", "covers_through_turn", "new_turns")
        ),
        "model": None,
        "generate_state": generate_state(cfg, slot_view(slot), user_turns_now),
    }
    if not cfg.enabled:
        return body
    summary, stale = summary_for_panel(get_store(), slot.session.key)
    if summary is None:
        return body
    covers = summary.user_turns
    if covers is not None and covers > user_turns_now:
        return body  # it describes turns a rewind removed: not shown (its pass is queued)
    body.update(
        stale=summary_behind(moved=stale, user_turns_now=user_turns_now, covers=covers),
        intents=[intent.model_dump(mode="json") for intent in summary.intents],
        constraints=summary.constraints,
        generated_at=summary.generated_at,
        user_turns=covers,
        last_activity=summary.last_activity,
        covers_through_turn=covers,
        new_turns=max(0, user_turns_now - covers) if covers is not None else None,
        model=summary.model,
    )
    return body


def summary_backlog() -> list[str]:
    """Slots an automatic pass would summarize whose mirror is not for the exact transcript
    (sig + gen): what a killed import or worker, or a dropped pass, left. The transcript and
    the mirror say so, so nothing else has to remember it."""
    cfg = summary_config()
    if not cfg.enabled:
        return []
    current = IntentSummary.objects.filter(
        session_id=OuterRef("session_id"),
        sig=OuterRef("session__sig"),
        gen=OuterRef("session__gen"),
    )
    mark = Coalesce("summary_state__turn_mark", 0)
    rows = (
        Slot.objects.filter(
            running=False, last_stop_reason=CLEAN_STOP, session__user_turns__gte=cfg.min_user_turns
        )
        .annotate(mark=mark)
        .filter(Q(mark=0) | Q(session__user_turns__gte=F("mark") + cfg.regenerate_after_turns))
        .exclude(Exists(current))
        .order_by("id")
        .values_list("name", "session__memory_mode")
    )
    return [name for name, mode in rows if not is_restricted(mode)]


def slot_gist_fields(session: Session) -> dict[str, Any]:
    """The slot payload's ``summary`` (a ``SlotExtra``): joined by the slot list, else one
    query. A missing reverse one-to-one raises an AttributeError subclass."""
    gist = getattr(session, "one_line_summary", None)
    return {"summary": gist.summary if gist is not None else ""}


# GET …/summary is polled: building and compiling its slot query through the ORM cost as
# much as the rest of the request (DESIGN: hand-written parts kept). The statement is
# built once per database alias; each GET executes it and makes the same Slot + Session
# (+ SummaryState) objects the ORM would (its converters applied).
Converter = Any
Column = tuple[Field[Any, Any], Any, list[Converter]]  # field, its Col, its converters
_statements: dict[str, tuple[str, list[Column]]] = {}


def _statement(alias: str) -> tuple[str, list[Column]]:
    built = _statements.get(alias)
    if built is None:
        connection = connections[alias]
        qn = connection.ops.quote_name
        columns: list[str] = []
        fields: list[Column] = []
        for prefix, model in (("s", Slot), ("t", Session), ("m", SummaryState)):
            field: Any
            for field in model._meta.concrete_fields:
                columns.append(f"{prefix}.{qn(field.column)}")
                col = field.get_col(model._meta.db_table)
                converters = connection.ops.get_db_converters(col) + field.get_db_converters(
                    connection
                )
                fields.append((field, col, converters))
        slot_fk = Slot._meta.get_field("session").column
        state_fk = SummaryState._meta.get_field("slot").column
        # Identifiers from the models' own meta, quoted; the name is a bound parameter.
        # The state row is optional (created on a slot's first pass): a LEFT JOIN.
        sql = (
            f"SELECT {', '.join(columns)} FROM {qn(Slot._meta.db_table)} s "  # noqa: S608
            f"INNER JOIN {qn(Session._meta.db_table)} t ON t.{qn('id')} = s.{qn(slot_fk)} "
            f"LEFT JOIN {qn(SummaryState._meta.db_table)} m ON m.{qn(state_fk)} = s.{qn('id')} "
            f"WHERE s.{qn('name')} = %s"
        )
        built = _statements[alias] = (sql, fields)
    return built


def slot_for_summary_read(name: str) -> Slot | None:
    """The slot with its session and summary state, in one precompiled query; no ownership
    check."""
    alias = router.db_for_read(Slot)
    sql, fields = _statement(alias)
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(sql, [name])
        row = cursor.fetchone()
    if row is None:
        return None
    values = []
    for value, (_field, col, converters) in zip(row, fields, strict=True):
        for convert in converters:
            value = convert(value, col, connection)
        values.append(value)
    made: list[Any] = []  # Slot, Session, SummaryState (None: the LEFT JOIN found no row)
    start = 0
    for model in (Slot, Session, SummaryState):
        end = start + len(model._meta.concrete_fields)
        names = [field.attname for field, _, _ in fields[start:end]]
        own = values[start:end]
        made.append(None if own[0] is None else model.from_db(alias, names, own))
        start = end
    slot: Slot = made[0]
    slot.session = made[1]
    # Cached on the slot as select_related would (None: no row yet, and no query later).
    rel: Any = Slot._meta.get_field("summary_state")  # the reverse one-to-one
    rel.set_cached_value(slot, made[2])
    return slot


def slot_view(slot: Slot) -> SlotView:
    """``in_flight``: the "generating" flag, not the claim."""
    return SlotView(
        in_flight=pass_pending(slot),
        memory_mode=slot.session.memory_mode or "",
        running=slot.running,
        last_stop_reason=slot.last_stop_reason or "",
        summary_turn_mark=summary_turn_mark(slot),
    )
