"""Admin for the summary mirrors and state, and "Summarize now" on one session (no batch
spending)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from pydantic import ValidationError

from transcripts.admin import ReadOnlyAdmin, session_admin_extend
from transcripts.models import Session

from .api import REFUSALS
from .core.gate import PassResult
from .core.intents import SummaryChecks
from .models import IntentSummary, OneLineSummary, SummaryState
from .services import summary_generate


def pretty_json(value: Any) -> SafeString:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


@admin.register(IntentSummary)
class IntentSummaryAdmin(ReadOnlyAdmin):
    list_display = (
        "session",
        "intent_count",
        "states",
        "checks",
        "user_turns",
        "model",
        "generated_at",
    )
    list_filter = ("model",)
    search_fields = ("session__key", "session__title", "states")
    list_select_related = ("session",)
    exclude = ("payload",)
    readonly_fields = (
        "session",
        "payload_pretty",
        "sig",
        "gen",
        "generated_at",
        "user_turns",
        "last_activity",
        "model",
        "duration_ms",
        "intent_count",
        "states",
        "checks",
    )

    @admin.display(description="checks")
    def checks(self, obj: IntentSummary) -> str:
        """What the checks changed in the reply, in their log form ("titles_cut=1")."""
        raw = obj.payload.get("checks") if isinstance(obj.payload, dict) else None
        try:
            return SummaryChecks.model_validate(raw).describe() if isinstance(raw, dict) else "-"
        except ValidationError:
            return "-"

    @admin.display(description="payload")
    def payload_pretty(self, obj: IntentSummary) -> SafeString:
        return pretty_json(obj.payload)


@admin.register(OneLineSummary)
class OneLineSummaryAdmin(ReadOnlyAdmin):
    list_display = ("session", "summary", "generated_at")
    search_fields = ("session__key", "summary")
    list_select_related = ("session",)


class IntentSummaryInline(admin.StackedInline):  # type: ignore[type-arg]
    model = IntentSummary
    fields = ("summary_pretty", "model", "generated_at", "user_turns", "sig", "gen")
    readonly_fields = fields
    can_delete = False
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="summary")
    def summary_pretty(self, obj: IntentSummary) -> SafeString:
        return pretty_json(obj.payload)


@admin.action(
    description="Summarize now (one session)",
    permissions=["summaries.generate_intentsummary"],  # a forced model pass
)
def summarize_now(
    modeladmin: admin.ModelAdmin[Session], request: HttpRequest, queryset: QuerySet[Session]
) -> None:
    sessions = list(queryset.select_related("slot")[:2])
    if len(sessions) != 1:
        modeladmin.message_user(
            request,
            "Select exactly one session: summaries are never generated in batch.",
            messages.ERROR,
        )
        return
    slot = getattr(sessions[0], "slot", None)
    if slot is None:
        modeladmin.message_user(request, "This session has no slot to summarize.", messages.ERROR)
        return
    outcome = summary_generate(slot_name=slot.name, force=True)
    # A sentence that starts with words, not the slot's name (the admin capitalizes a
    # message's first letter); why not in the API's own words.
    if outcome.reason is PassResult.STORED:
        told = f"A new summary of {slot.name} was written."
    elif outcome.reason is PassResult.CURRENT:
        told = f"The summary of {slot.name} is already up to date."
    else:
        told = f"No summary of {slot.name} was written: {REFUSALS[outcome.reason][2]}."
    modeladmin.message_user(request, told, messages.SUCCESS if outcome.ok else messages.WARNING)


# The session admin is transcripts', which knows nothing of summaries.
session_admin_extend(inlines=(IntentSummaryInline,), actions=(summarize_now,))


@admin.register(SummaryState)
class SummaryStateAdmin(admin.ModelAdmin[SummaryState]):
    """Editable: an operator may clear a stuck "generating" flag or reset the turn mark."""

    list_display = ("slot", "turn_mark", "in_flight_until")
    search_fields = ("slot__name",)
    list_select_related = ("slot",)
    readonly_fields = ("slot",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # created by the first pass of a slot
