from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    """The WebSocket layer (why it precedes ``summaries``: see INSTALLED_APPS)."""

    name = "kirocrew_site.realtime"
    label = "realtime"
    verbose_name = "Realtime"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model, user_logged_out
        from django.contrib.sessions.models import Session
        from django.db.models.signals import post_delete, post_save

        from summaries.signals import summary_stored
        from transcripts import signals

        from . import receivers

        user = get_user_model()
        for signal, receiver, sender in (
            (signals.rows_appended, receivers.on_rows_appended, None),
            (signals.revision_appended, receivers.on_revision_appended, None),
            (signals.turn_started, receivers.on_turn_started, None),
            (signals.turn_ended, receivers.on_turn_ended, None),
            (summary_stored, receivers.on_summary_stored, None),
            (signals.app_token_rotated, receivers.on_app_token_rotated, None),
            (user_logged_out, receivers.on_user_logged_out, None),
            # A login session deleted (a flush, a key cycled at login, expiry cleanup), a
            # user saved (password, ``is_active``) or deleted.
            (post_delete, receivers.on_login_session_deleted, Session),
            (post_save, receivers.on_user_saved, user),
            (post_delete, receivers.on_user_deleted, user),
        ):
            signal.connect(receiver, sender=sender, dispatch_uid=f"realtime.{receiver.__name__}")
