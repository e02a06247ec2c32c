"""What summaries announces. Sent after the commit that stored the summary.

``summary_stored(slot_name)``
    a summary for the slot was written (or its mirror restored): clients refetch GET
    ``…/summary``. The realtime layer sends the ``session_summary`` frame and the
    "Summary updated" notification.
"""

from __future__ import annotations

from django.dispatch import Signal

summary_stored = Signal()
