from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    """The WebSocket layer: the dashboard socket, its frames, and the receivers that turn
    what transcripts and summaries announce (Django signals, sent after commit) into frames.

    Listed before ``summaries`` in INSTALLED_APPS on purpose: receivers run in the order
    they were connected, and an inline summary pass (run by summaries' ``turn_ended``
    receiver) announces its summary at once, so the turn's own end frame must go first.
    """

    name = "kirocrew_site.realtime"
    label = "realtime"
    verbose_name = "Realtime"

    def ready(self) -> None:
        from summaries.signals import summary_stored
        from transcripts import signals

        from . import receivers

        for signal, receiver in (
            (signals.rows_appended, receivers.on_rows_appended),
            (signals.revision_appended, receivers.on_revision_appended),
            (signals.turn_started, receivers.on_turn_started),
            (signals.turn_ended, receivers.on_turn_ended),
            (summary_stored, receivers.on_summary_stored),
        ):
            signal.connect(receiver, dispatch_uid=f"realtime.{receiver.__name__}")
        self._connect_revocations()

    def _connect_revocations(self) -> None:
        """What revokes a socket's credential (``revocation.py``): a rotated app token, a
        logout, a deleted login session, a user saved (password, ``is_active``) or deleted."""
        from django.contrib.auth import get_user_model, user_logged_out
        from django.contrib.sessions.models import Session
        from django.db.models.signals import post_delete, post_save

        from transcripts import signals

        from . import revocation

        user = get_user_model()
        for signal, receiver, sender in (
            (signals.app_token_rotated, revocation.on_app_token_rotated, None),
            (user_logged_out, revocation.on_user_logged_out, None),
            (post_delete, revocation.on_login_session_deleted, Session),
            (post_save, revocation.on_user_saved, user),
            (post_delete, revocation.on_user_deleted, user),
        ):
            uid = f"realtime.{receiver.__name__}"
            signal.connect(receiver, sender=sender, dispatch_uid=uid)
