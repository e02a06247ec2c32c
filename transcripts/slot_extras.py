"""Fields another app adds to every slot payload (``api.slot_payload``), without
transcripts importing that app: a ``SlotExtra`` registered in its ``AppConfig.ready()``.
Each field is declared on ``SlotOut`` with a default, so the shape holds without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .models import Session


@dataclass(frozen=True, slots=True)
class SlotExtra:
    name: str  # registering the same name again replaces it (a reloaded AppConfig)
    # Relations of Session the list joins, so a page of slots stays one query.
    related: tuple[str, ...]
    fields: Callable[[Session], dict[str, Any]]  # read from the session and what it joined


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
