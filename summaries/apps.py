from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Summaries"

    def ready(self) -> None:
        from . import push, realtime

        push.register_sender(realtime.send_session_summary)
        push.register_frame_sender(realtime.send_frame)
