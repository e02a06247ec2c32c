"""SecurityEvent rows become aggregates (count per key and time window); the
``rewind_session`` permission for dashboard users who are not staff.

Existing rows keep their values: each becomes a window of its own (count 1) with a
fingerprint no new key can produce, so the unique constraint holds.
"""

from typing import Any

import django.utils.timezone
from django.db import migrations, models


def backfill(apps: Any, schema_editor: Any) -> None:
    SecurityEvent = apps.get_model("transcripts", "SecurityEvent")
    for event in SecurityEvent.objects.all().only("pk", "created_at").iterator():
        SecurityEvent.objects.filter(pk=event.pk).update(
            fingerprint=f"legacy:{event.pk}",
            window_start=event.created_at,
            last_seen_at=event.created_at,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("transcripts", "0001_initial"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="session",
            options={
                "ordering": (models.F("last_activity").desc(nulls_last=True), "-created_at"),
                "permissions": [
                    ("rewind_session", "Can rewind a session (drop rows after a point)")
                ],
            },
        ),
        migrations.AddField(
            model_name="securityevent",
            name="count",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="securityevent",
            name="last_seen_at",
            field=models.DateTimeField(
                default=django.utils.timezone.now, help_text="latest occurrence"
            ),
        ),
        migrations.AddField(
            model_name="securityevent",
            name="window_start",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="securityevent",
            name="fingerprint",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="securityevent",
            name="fingerprint",
            field=models.CharField(max_length=64, unique=True),
        ),
        migrations.AlterField(
            model_name="securityevent",
            name="created_at",
            field=models.DateTimeField(
                default=django.utils.timezone.now, help_text="first occurrence"
            ),
        ),
        migrations.AddIndex(
            model_name="securityevent",
            index=models.Index(fields=["caller", "window_start"], name="security_event_window_idx"),
        ),
    ]
