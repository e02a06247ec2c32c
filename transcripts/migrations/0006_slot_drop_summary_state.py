"""``Slot.summary_turn_mark`` and ``Slot.summary_in_flight_until`` now live in
``summaries.SummaryState`` (its 0002 copied them): summaries owns its state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("transcripts", "0005_session_source_project"),
        ("summaries", "0002_summarystate"),
    ]

    operations = [
        migrations.RemoveField(model_name="slot", name="summary_turn_mark"),
        migrations.RemoveField(model_name="slot", name="summary_in_flight_until"),
    ]
