"""New rows of one model in one ``executemany``: ``bulk_create`` without the ORM's
per-object, per-field compiler walk (most of the main process's time in a bulk import)."""

from __future__ import annotations

from typing import Any

from django.db import connections, router
from django.db.models import Model
from django.db.models.fields import AutoFieldMixin
from django.utils import timezone


def rows_insert(model: type[Model], rows: list[dict[str, Any]]) -> None:
    """``model.objects.bulk_create`` of new objects given as {attname: value}, in one
    ``executemany``: every concrete column but the auto primary key, each field's default
    where none is given, ``auto_now`` / ``auto_now_add`` stamped, each value adapted by
    its field (``get_db_prep_save``) as the ORM's insert does. The ORM's per-object,
    per-field compiler walk was most of the main process's time in a bulk import."""
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    fields = [
        field
        for field in model._meta.concrete_fields
        if not (field.primary_key and isinstance(field, AutoFieldMixin))
    ]
    now = timezone.now()
    stamped = {
        field.attname
        for field in fields
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
    }
    params = []
    for row in rows:
        values = []
        for field in fields:
            name = field.attname
            if name in stamped:
                value = now
            elif name in row:
                value = row[name]
            else:
                value = field.get_default()
            values.append(field.get_db_prep_save(value, connection))
        params.append(values)
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    marks = ", ".join(["%s"] * len(fields))
    # Identifiers from the model, quoted by the backend; every value is a parameter.
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks})"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
