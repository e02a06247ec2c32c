from django.apps import AppConfig


class SearchConfig(AppConfig):
    """The full-text index, derived from the files (``manage.py search_rebuild``)."""

    name = "kirocrew_site.search"
    label = "search"
    verbose_name = "Search"

    def ready(self) -> None:
        from summaries.signals import summary_stored
        from transcripts import signals

        from . import receivers

        for signal, receiver in (
            (signals.rows_appended, receivers.on_rows_appended),
            (signals.revision_appended, receivers.on_revision_appended),
            (signals.turn_ended, receivers.on_turn_ended),
            (signals.session_rewritten, receivers.on_session_rewritten),
            (signals.session_deleted, receivers.on_session_deleted),
            (signals.import_finished, receivers.on_import_finished),
            (summary_stored, receivers.on_summary_stored),
        ):
            signal.connect(receiver, dispatch_uid=f"search.{receiver.__name__}")
