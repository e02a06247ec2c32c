from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Summaries"

    def ready(self) -> None:
        from . import push, realtime

        push.register_sender(realtime.send_session_summary)
        push.register_frame_sender(realtime.send_frame)

        from transcripts import signals

        from . import receivers

        signals.rows_appended.connect(receivers.on_rows_appended, dispatch_uid="summaries-rows")
        signals.turn_ended.connect(receivers.on_turn_ended, dispatch_uid="summaries-turn-end")
