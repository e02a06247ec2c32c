"""New rows of one model, given as {attname: value}, in one ``bulk_create``."""

from __future__ import annotations

from typing import Any

from django.db.models import Model


def rows_insert(model: type[Model], rows: list[dict[str, Any]]) -> None:
    """``bulk_create`` of new ``model`` objects: each field's default where none is
    given, ``auto_now`` / ``auto_now_add`` stamped by the ORM."""
    if rows:
        model._default_manager.bulk_create([model(**row) for row in rows])
