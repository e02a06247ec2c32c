"""Pass outcomes and the slot lookup the summary-pass tests share."""

from __future__ import annotations

from summaries.services import PassOutcome, PassResult
from transcripts.models import Slot

STORED = PassOutcome(PassResult.STORED)
CURRENT = PassOutcome(PassResult.CURRENT)


def slot_row(name: str = "s1") -> Slot:
    return Slot.objects.select_related("session").get(name=name)
