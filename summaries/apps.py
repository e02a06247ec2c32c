from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Summaries"

    def ready(self) -> None:
        from transcripts.core.rewrite import register_derived

        from .core.sidecar import sidecar_paths

        # The sidecar layout is ours: transcripts' delete asks this hook what to reap.
        register_derived("summaries", sidecar_paths)

        from transcripts import signals

        from . import receivers

        signals.turn_ended.connect(receivers.on_turn_ended, dispatch_uid="summaries-turn-end")
        signals.session_rewritten.connect(
            receivers.on_session_rewritten, dispatch_uid="summaries-session-rewritten"
        )
        signals.session_deleted.connect(
            receivers.on_session_deleted, dispatch_uid="summaries-session-deleted"
        )
        signals.import_finished.connect(
            receivers.on_import_finished, dispatch_uid="summaries-import-finished"
        )
        from . import signals as own_signals

        own_signals.summary_wanted.connect(
            receivers.on_summary_wanted, dispatch_uid="summaries-summary-wanted"
        )
        from django.core.signals import request_started

        # A server queues what a killed import or worker left unsummarized, once.
        request_started.connect(
            receivers.on_first_request, dispatch_uid=receivers.FIRST_REQUEST_UID
        )

        from transcripts.slot_extras import SlotExtra, slot_extra_register

        from .selectors import slot_gist_fields

        # Every slot payload carries the one-line summary; the list joins it per page.
        slot_extra_register(SlotExtra("summaries", ("one_line_summary",), slot_gist_fields))
