"""``Slot.dirty`` (a flag a crashed writer left set forever) becomes ``dirty_until``, a
lease that expires. Existing flags are dropped: no writer survives a migration."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("transcripts", "0002_securityevent_aggregation_rewind_permission"),
    ]

    operations = [
        migrations.RemoveField(model_name="slot", name="dirty"),
        migrations.AddField(
            model_name="slot",
            name="dirty_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
