"""What transcripts announces, for other apps to act on without transcripts importing them.
Sent after the commit that made it true (never a state that could still roll back), with
``send_robust`` (a failing receiver never fails the write).

``rows_appended(slot_name, ts, roles)``
    rows landed on disk and in the mirror (turn API, imports, follow mode).
``revision_appended(slot_name, ts, target_ts)``
    a revision record changing an earlier row landed.
``turn_started(slot_name)``
    a turn started (the person's message is the first row of it).
``turn_ended(slot_name, stop_reason, quiet=False)``
    a turn ended (``"end_turn"``: cleanly). ``quiet``: a one-off import's, which pushes
    nothing to the dashboards.
``session_deleted(session_key, slot_name)``
    a session and its transcript are gone.
``session_rewritten(session_key, slot_name, reason)``
    the transcript was rewritten in place (rotation, rewind, purge): its identity moved.
``import_finished(interrupted)``
    ``import_transcripts`` is about to return (``interrupted``: by Ctrl-C), outside any
    transaction: work queued in this process must finish or be given up now (at the
    interpreter's exit it can no longer push its frames).
``app_token_rotated(app_id)``
    the app's token was replaced (``create_app --rotate``): whatever was opened with the
    old one (the app's dashboard sockets) must stop being served.
"""

from __future__ import annotations

from django.dispatch import Signal

rows_appended = Signal()
revision_appended = Signal()
turn_started = Signal()
turn_ended = Signal()
session_deleted = Signal()
session_rewritten = Signal()
import_finished = Signal()
app_token_rotated = Signal()
