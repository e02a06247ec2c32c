"""What transcripts announces, for other apps to act on without transcripts importing them.

Every signal is sent after the database commit that made it true (``transaction.on_commit``),
so a receiver never sees a state that could still roll back. Receivers must not raise:
``send_robust`` is used, and a failing receiver is logged, never fails the write.

``rows_appended(slot_name, ts, roles)``
    rows landed on disk and in the mirror (turn API, imports, follow mode).
``revision_appended(slot_name, ts, target_ts)``
    a revision record changing an earlier row landed.
``turn_started(slot_name)``
    a turn started (the person's message is the first row of it).
``turn_ended(slot_name, stop_reason, quiet=False)``
    a turn ended; ``stop_reason == "end_turn"`` is a clean end. Summaries runs its gated
    pass on every one (the gate refuses the unclean ones, and says why). ``quiet``: a
    one-off import's turn end, which pushes nothing to the dashboards (realtime sends no
    frame for it).
``session_deleted(session_key, slot_name)``
    a session and its transcript are gone.
``session_rewritten(session_key, slot_name, reason)``
    the transcript was rewritten in place (rotation, rewind, purge): its identity moved.
``import_finished(interrupted)``
    ``import_transcripts`` is about to return (its run, or its ``--follow`` loop, ended;
    ``interrupted``: by Ctrl-C). Sent outside any transaction. Work its turn ends queued
    in this process (summary passes) must finish, or be given up, before the command
    exits: a pass left to the interpreter's exit can no longer push its frames.
``app_token_rotated(app_id)``
    the app's token was replaced (``create_app --rotate``): the old one is revoked, so
    whatever was opened with it (the app's dashboard sockets) must stop being served.
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
