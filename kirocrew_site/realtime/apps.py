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
