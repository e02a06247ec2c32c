"""What summaries announces. Sent after the commit that stored the summary.

``summary_stored(slot_name)``
    a summary for the slot was written (or its mirror restored): clients refetch GET
    ``…/summary``. The realtime layer sends the ``session_summary`` frame and the
    "Summary updated" notification.
``summary_wanted(slot_name)``
    a pass was refused while another held the slot's claim, and that one ended: another
    pass is queued (``receivers.on_turn_ended``).
"""

from __future__ import annotations

from django.dispatch import Signal

summary_stored = Signal()
summary_wanted = Signal()
