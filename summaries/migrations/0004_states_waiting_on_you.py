"""The list's state chips and filter read the mirror's ``states``: recompute them with the
rule as it is now (an open question or a failed last run needs you), so a summary stored
before it shows in "Needs you" as its badge says, without waiting for its next pass."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def states_recompute(apps: Any, schema_editor: Any) -> None:
    from summaries.core.intents import intent_state  # the one rule, as the pass applies it

    IntentSummary = apps.get_model("summaries", "IntentSummary")
    for mirror in IntentSummary.objects.only("pk", "payload", "states").iterator():
        intents = (mirror.payload or {}).get("intents") or []
        states = ",".join(intent_state(i) for i in intents if isinstance(i, dict))[:400]
        if states != mirror.states:
            IntentSummary.objects.filter(pk=mirror.pk).update(states=states)


class Migration(migrations.Migration):
    dependencies = [("summaries", "0003_generate_permission")]

    operations = [migrations.RunPython(states_recompute, migrations.RunPython.noop)]
