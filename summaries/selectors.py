"""Reads of summaries. GET never generates; freshness is one stat, never a transcript read."""

from __future__ import annotations

from typing import Any

from django.db import connections, router
from django.db.models import Field, QuerySet

from transcripts.listing import SessionPage, session_page
from transcripts.models import App, Session, Slot
from transcripts.runtime import get_store
from transcripts.selectors import session_list

from .core.gate import generate_state
from .core.payload import evidence_of
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


def _served_intents(value: object) -> list[dict[str, Any]]:
    """Stored intents as the schema serves them: an entry without a title is no intent, and
    evidence is checked again (a sidecar from an older or foreign writer is not trusted)."""
    if not isinstance(value, list):
        return []
    return [
        {**item, "evidence": evidence_of(item.get("evidence"))}
        for item in value
        if isinstance(item, dict) and isinstance(item.get("title"), str)
    ]


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
        intents=_served_intents(data.get("intents")),
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
    """Own sessions that have a slot, newest activity first, with the slot, its app and
    the one-line summary joined (one query for a whole page)."""
    return (
        session_list(app=scope if isinstance(scope, App) else "")
        .filter(slot__isnull=False)
        .select_related("slot__app", "one_line_summary")
    )


def slot_list_page(*, scope: App | str, cursor: str | None, limit: int) -> SessionPage:
    """One keyset page of ``slot_list_with_gist`` (raises ``InvalidListCursor``)."""
    return session_page(slot_list_with_gist(scope=scope), after=cursor, limit=limit)


# --------------------------------------------------------------- the summary GET's slot read
# GET …/summary is polled; it used to spend as much on building and compiling its slot
# query (select_related, Meta ordering, slicing) as on the rest of the request. The
# statement below is built once per database alias; each GET only executes it and turns
# the row into the same Slot + Session objects the ORM would (its converters applied).
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
        for prefix, model in (("s", Slot), ("t", Session)):
            field: Any
            for field in model._meta.concrete_fields:
                columns.append(f"{prefix}.{qn(field.column)}")
                col = field.get_col(model._meta.db_table)
                converters = connection.ops.get_db_converters(col) + field.get_db_converters(
                    connection
                )
                fields.append((field, col, converters))
        slot_fk = Slot._meta.get_field("session").column
        # Identifiers from the models' own meta, quoted; the name is a bound parameter.
        sql = (
            f"SELECT {', '.join(columns)} FROM {qn(Slot._meta.db_table)} s "  # noqa: S608
            f"INNER JOIN {qn(Session._meta.db_table)} t ON t.{qn('id')} = s.{qn(slot_fk)} "
            f"WHERE s.{qn('name')} = %s"
        )
        built = _statements[alias] = (sql, fields)
    return built


def slot_for_summary_read(name: str) -> Slot | None:
    """The slot ``name`` with its session, in one precompiled query (no ownership check:
    the caller compares ``app_id``); None when there is none."""
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
    split = len(Slot._meta.concrete_fields)
    slot = Slot.from_db(alias, [f.attname for f, _, _ in fields[:split]], values[:split])
    session = Session.from_db(alias, [f.attname for f, _, _ in fields[split:]], values[split:])
    slot.session = session
    return slot
