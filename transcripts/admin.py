"""Admin: read-only mirrors with the folded transcript, apps whose token is shown once.
Another app adds inlines and actions to the session admin with ``session_admin_extend``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.options import IS_POPUP_VAR, InlineModelAdmin
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from .core.content import bound_rows
from .core.errors import TranscriptError
from .core.rewrite import rotation_blocker
from .core.store import SessionView
from .core.words import counted
from .models import App, SecurityEvent, Session, Slot
from .runtime import get_store
from .services import session_rotate, session_verify
from .services.apps import app_token_new

EDGE_ROWS = 200  # rows shown at each end of a long transcript
CONTENT_CHARS = 500
MAX_ANOMALIES = 200
ROW_HTML = "<tr><td>{}</td><td>{}</td><td>{}</td><td style='white-space:pre-wrap'>{}</td></tr>"

SessionAction = Callable[[Any, HttpRequest, QuerySet[Session]], None]
_extra_inlines: list[type[InlineModelAdmin[Any, Any]]] = []
_extra_actions: list[SessionAction] = []


def session_admin_extend(
    *,
    inlines: tuple[type[InlineModelAdmin[Any, Any]], ...] = (),
    actions: tuple[SessionAction, ...] = (),
) -> None:
    """Add inlines and ``@admin.action`` functions to the session admin, each once. An
    action must declare ``permissions`` (its app's dotted ones, or this admin's ``"view"``,
    ``"rotate"``); one without is never offered, nor run."""
    _extra_inlines.extend(i for i in inlines if i not in _extra_inlines)
    _extra_actions.extend(a for a in actions if a not in _extra_actions)


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """A mirror or an audit record: never added or edited by hand."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(App)
class AppAdmin(admin.ModelAdmin[App]):
    list_display = ("name", "token_prefix", "created_at")
    search_fields = ("name",)
    readonly_fields = ("token_prefix", "created_at")
    exclude = ("token_hash",)

    def get_readonly_fields(self, request: HttpRequest, obj: App | None = None) -> Any:
        # The name is written into transcripts' line 0; renaming would orphan them.
        return ("name", *self.readonly_fields) if obj else self.readonly_fields

    def save_model(
        self, request: HttpRequest, obj: App, form: ModelForm[App], change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, obj.token_hash, obj.token_prefix = app_token_new()
        super().save_model(request, obj, form, change)
        messages.warning(
            request,
            format_html(
                "Token for app {}: <code>{}</code> — copy it now; it is not stored and will "
                "not be shown again.",
                obj.name,
                token,
            ),
        )


def _session_view(obj: Session) -> SessionView | str:
    """The folded session, read once per page (cached on the instance)."""
    cached: SessionView | str | None = getattr(obj, "_kc_view", None)
    if cached is None:
        try:
            cached = get_store().read_session(obj.key)
            cached.rows = bound_rows(cached.rows, cached.report)  # reported, never a 500
        except (OSError, TranscriptError) as exc:
            cached = f"cannot read the transcript: {exc}"
        obj._kc_view = cached  # type: ignore[attr-defined]
    return cached


def _row_html(index: int, row: dict[str, Any]) -> tuple[Any, ...]:
    content = row.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if len(text) > CONTENT_CHARS:
        text = text[:CONTENT_CHARS] + f"… ({len(text)} chars)"
    return (index, str(row.get("role", "")), str(row.get("ts", "")), text)


@admin.register(Session)
class SessionAdmin(ReadOnlyAdmin):
    """A mirror of files: deleting only the row would be drift (the API deletes for real)."""

    # Short headers and a compact date: at 1 366 px the long ones pushed "anomalies" out of
    # the changelist's scroll box (column headers never wrap in the admin).
    # The source is a filter, not a column: one more column clips "anomalies" at 1 366 px,
    # and the key already starts with it for imported agents (claude:… / codex:…).
    list_display = ("title", "key", "app", "active", "turns", "size", "anomalies")
    list_filter = ("source", "app", "closed", "pinned")
    search_fields = ("key", "title")
    list_select_related = ("app",)
    actions = ("verify_transcripts", "rotate_transcripts")
    exclude = ("anomaly_counts",)
    readonly_fields = ("anomaly_counts_pretty", "rotation", "fold_report", "transcript")

    def get_inlines(self, request: HttpRequest, obj: Session | None) -> list[Any]:
        return [*super().get_inlines(request, obj), *_extra_inlines]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        if IS_POPUP_VAR in request.GET:
            return actions  # no actions in a popup, as the base class decides
        for func in _extra_actions:
            described = self.get_action(func)
            if described is not None and self._extra_action_allowed(request, func):
                actions[described[1]] = described
        return actions

    def _extra_action_allowed(self, request: HttpRequest, func: SessionAction) -> bool:
        """Django filters the admin's own actions by ``has_<name>_permission``; another
        app's action names its own app's permission, which this admin cannot define."""
        required: tuple[str, ...] = tuple(getattr(func, "allowed_permissions", ()))
        # Fail closed: an action that declares nothing is never offered.
        return bool(required) and all(
            request.user.has_perm(name)
            if "." in name
            else getattr(self, f"has_{name}_permission")(request)
            for name in required
        )

    def has_rotate_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("transcripts.rotate_session")

    def has_delete_permission(self, request: HttpRequest, obj: Session | None = None) -> bool:
        return False

    @admin.display(description="last active", ordering="last_activity")
    def active(self, obj: Session) -> str:
        stamp = obj.last_activity
        return timezone.localtime(stamp).strftime("%Y-%m-%d %H:%M") if stamp else "-"

    @admin.display(description="turns", ordering="user_turns")
    def turns(self, obj: Session) -> int:
        return obj.user_turns

    @admin.display(description="anomalies")
    def anomalies(self, obj: Session) -> int:
        return sum(v for v in (obj.anomaly_counts or {}).values() if isinstance(v, int))

    @admin.display(description="anomaly counts")
    def anomaly_counts_pretty(self, obj: Session) -> SafeString:
        return format_html("<pre>{}</pre>", json.dumps(obj.anomaly_counts, indent=2))

    @admin.display(description="rotation")
    def rotation(self, obj: Session) -> SafeString:
        try:
            blocker = rotation_blocker(get_store(), obj.key)
        except (OSError, TranscriptError) as exc:
            return format_html("<p>{}</p>", f"cannot read the transcript: {exc}")
        if blocker is None:
            return format_html("<p>{}</p>", "ok")
        return format_html(
            "<p><strong>cannot_rotate</strong>: {}. Appends no longer rotate this file; the "
            "action &ldquo;Rotate (forced)&rdquo; repairs it.</p>",
            blocker,
        )

    @admin.display(description="fold report")
    def fold_report(self, obj: Session) -> SafeString:
        view = _session_view(obj)
        if isinstance(view, str):
            return format_html("<p>{}</p>", view)
        report = view.report.as_dict()
        report["anomalies"] = report["anomalies"][:MAX_ANOMALIES]
        return format_html(
            "<p>files (read order): {}</p><pre>{}</pre>",
            ", ".join(view.files),
            json.dumps(report, indent=2, ensure_ascii=False),
        )

    @admin.display(description="transcript (folded)")
    def transcript(self, obj: Session) -> SafeString:
        view = _session_view(obj)
        if isinstance(view, str):
            return format_html("<p>{}</p>", view)
        rows = list(enumerate(view.rows))
        head, tail = rows, []
        if len(rows) > 2 * EDGE_ROWS:
            head, tail = rows[:EDGE_ROWS], rows[-EDGE_ROWS:]
        body = format_html_join("", ROW_HTML, (_row_html(i, row) for i, row in head))
        if tail:
            gap = len(rows) - len(head) - len(tail)
            body += format_html("<tr><td colspan='4'>… {} rows not shown …</td></tr>", gap)
            body += format_html_join("", ROW_HTML, (_row_html(i, row) for i, row in tail))
        return format_html(
            "<table><thead><tr><th>#</th><th>role</th><th>ts</th><th>content</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            body,
        )

    @admin.action(description="Verify transcript", permissions=["view"])  # reads; no repair
    def verify_transcripts(self, request: HttpRequest, queryset: QuerySet[Session]) -> None:
        for session in queryset:
            findings = session_verify(key=session.key, session=session)
            text = "; ".join(f"{f.kind}: {f.detail}" for f in findings)
            text = text or "transcript verified, no problems found"
            level = messages.WARNING if findings else messages.SUCCESS
            self.message_user(request, f"{_label(session)}: {text}", level)

    @admin.action(description="Rotate (forced)", permissions=["rotate"])
    def rotate_transcripts(self, request: HttpRequest, queryset: QuerySet[Session]) -> None:
        for session in queryset:
            try:
                dropped = session_rotate(key=session.key, force=True)
            except (OSError, TranscriptError) as exc:
                self.message_user(request, f"{_label(session)}: failed: {exc}", messages.ERROR)
            else:
                archived = counted(dropped, "row")
                self.message_user(request, f"{_label(session)}: rotated, {archived} archived")


def _label(session: Session) -> str:
    """Its slot name, else its key (``Dashboard:s1`` reads like a typo next to a colon)."""
    slot = getattr(session, "slot", None)
    return f"Session {slot.name!r}" if slot is not None else f"Session {session.key!r}"


@admin.register(Slot)
class SlotAdmin(admin.ModelAdmin[Slot]):
    list_display = ("name", "session", "app", "running", "dirty", "last_stop_reason")
    list_filter = ("app", "running")  # "dirty" is a lease (a property), not a column
    search_fields = ("name", "session__key", "session__title")
    list_select_related = ("session", "app")
    # Turn state is editable so an operator can clear a stuck turn.
    readonly_fields = ("name", "session", "app", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a slot is created with its session

    def has_delete_permission(self, request: HttpRequest, obj: Slot | None = None) -> bool:
        return False


@admin.register(SecurityEvent)
class SecurityEventAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "last_seen_at",
        "count",
        "operation",
        "outcome",
        "caller",
        "resource",
        "source",
    )
    list_filter = ("operation", "outcome")
    search_fields = ("caller", "resource", "error")
    date_hierarchy = "created_at"

    def has_delete_permission(self, request: HttpRequest, obj: SecurityEvent | None = None) -> bool:
        return False
