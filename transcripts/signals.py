"""Signals transcripts sends for other apps to act on, without importing them.

``rows_appended(slot_name, ts, roles)``: rows landed on disk and in the mirror (sent after
commit); the realtime layer announces them. ``turn_ended(slot_name)``: a turn completed
cleanly (an assistant reply ended it, no tool call pending), sent after commit; summaries
runs its gated pass, the same one the turn API's turn end dispatches.
"""

from __future__ import annotations

from django.dispatch import Signal

rows_appended = Signal()
turn_ended = Signal()
