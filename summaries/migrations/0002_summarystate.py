"""The turn mark and the in-flight marker move off ``transcripts.Slot`` into summaries'
own ``SummaryState`` (one row per slot). Values are copied here; transcripts' 0006 then
drops the old columns. Reversible: backwards, the values are copied back first."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.db.models import Q


def copy_to_state(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """A row only for a slot with something to keep: no row reads as mark 0, none in flight."""
    Slot = apps.get_model("transcripts", "Slot")
    SummaryState = apps.get_model("summaries", "SummaryState")
    db = schema_editor.connection.alias
    marked = Slot.objects.using(db).filter(
        ~Q(summary_turn_mark=0) | Q(summary_in_flight_until__isnull=False)
    )
    rows = marked.values_list("pk", "summary_turn_mark", "summary_in_flight_until")
    SummaryState.objects.using(db).bulk_create(
        [
            SummaryState(slot_id=pk, turn_mark=mark, in_flight_until=until)
            for pk, mark, until in rows
        ],
        batch_size=500,
    )


def copy_to_slot(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Slot = apps.get_model("transcripts", "Slot")
    SummaryState = apps.get_model("summaries", "SummaryState")
    db = schema_editor.connection.alias
    for pk, mark, until in SummaryState.objects.using(db).values_list(
        "slot_id", "turn_mark", "in_flight_until"
    ):
        Slot.objects.using(db).filter(pk=pk).update(
            summary_turn_mark=mark, summary_in_flight_until=until
        )


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0001_initial"),
        ("transcripts", "0005_session_source_project"),
    ]

    operations = [
        migrations.CreateModel(
            name="SummaryState",
            fields=[
                (
                    "slot",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="summary_state",
                        serialize=False,
                        to="transcripts.slot",
                    ),
                ),
                ("turn_mark", models.PositiveIntegerField(default=0)),
                ("in_flight_until", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "verbose_name": "summary state",
                "verbose_name_plural": "summary states",
            },
        ),
        migrations.RunPython(copy_to_state, copy_to_slot),
    ]
