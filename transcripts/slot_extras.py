"""Fields another app adds to every slot payload, without transcripts importing that app.

The extension point of the slot routes (``transcripts.api.slot_payload`` and the slot
list). An app registers a ``SlotExtra`` in its ``AppConfig.ready()``:

``related``
    relations of ``Session`` the list joins (``select_related``), so a page of slots is
    still one query however many apps add fields;
``fields(session)``
    the payload fields it supplies, read from the session (and what ``related`` joined).

Every field an extra supplies is declared on ``SlotOut`` with a default, so the schema
and the JSON keep their shape when no app registers. ``summaries`` registers the slot's
one-line summary (``summary``) this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .models import Session


@dataclass(frozen=True, slots=True)
class SlotExtra:
    name: str  # registering the same name again replaces it (a reloaded AppConfig)
    related: tuple[str, ...]
    fields: Callable[[Session], dict[str, Any]]


_extras: dict[str, SlotExtra] = {}


def slot_extra_register(extra: SlotExtra) -> None:
    _extras[extra.name] = extra


def slot_extra_related() -> tuple[str, ...]:
    return tuple(rel for extra in _extras.values() for rel in extra.related)


def slot_extra_fields(session: Session) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for extra in _extras.values():
        fields.update(extra.fields(session))
    return fields
