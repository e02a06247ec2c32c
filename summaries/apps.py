from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"

    def ready(self) -> None:
        from django.core.signals import request_started

        from transcripts import signals
        from transcripts.core.rewrite import register_derived
        from transcripts.selectors import SlotExtra, slot_extra_register

        from . import receivers
        from .core.sidecar import sidecar_paths
        from .selectors import slot_gist_fields
        from .signals import summary_wanted

        # The sidecar layout is ours: transcripts' delete asks this hook what to reap.
        register_derived("summaries", sidecar_paths)
        for signal, receiver, uid in (
            (signals.turn_ended, receivers.on_turn_ended, "summaries-turn-end"),
            (signals.session_rewritten, receivers.on_session_rewritten, "summaries-rewritten"),
            (signals.session_deleted, receivers.on_session_deleted, "summaries-session-deleted"),
            (signals.import_finished, receivers.on_import_finished, "summaries-import-finished"),
            (summary_wanted, receivers.on_turn_ended, "summaries-summary-wanted"),
            # A server queues what a killed import or worker left unsummarized, once.
            (request_started, receivers.on_first_request, receivers.FIRST_REQUEST_UID),
        ):
            signal.connect(receiver, dispatch_uid=uid)
        # Every slot payload carries the one-line summary; the list joins it per page.
        slot_extra_register(SlotExtra("summaries", ("one_line_summary",), slot_gist_fields))
