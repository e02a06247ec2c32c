"""The settings page (staff only): session summaries on or off, and which backend writes
them (listed, tested with one short request, picked)."""

from __future__ import annotations

import json
import os
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from summaries.api import BACKEND_REFUSALS
from summaries.backend_picker import (
    ChoiceRefused,
    backend_choice_parse,
    backend_choice_store,
    backend_options,
    backend_test,
)
from summaries.core.backend_check import CheckResult
from summaries.core.backend_choice import effective_spec
from summaries.core.config import ConfigWriteError, write_enabled
from summaries.envconfig import ENV_ENABLED
from summaries.runtime import summary_backend_choice, summary_config

from .views import json_error


@login_required
@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    user: Any = request.user
    if not user.is_staff:
        raise PermissionDenied("staff only")
    path = settings.KIROCREW_CONFIG_PATH
    if request.method == "POST":
        wanted = request.POST.get("enabled")
        if wanted not in {"on", "off"}:
            messages.error(request, "Choose on or off.")
        else:
            try:
                write_enabled(path, wanted == "on")
            except (ConfigWriteError, OSError) as exc:
                messages.error(request, f"config.json was not changed: {exc}")
            else:
                messages.success(request, f"Session summaries turned {wanted} in {path.name}.")
        return redirect("dashboard:settings")
    cfg = summary_config()
    chosen = summary_backend_choice()
    return render(
        request,
        "dashboard/settings.html",
        {
            "config": [(key, json.dumps(value)) for key, value in cfg.to_dict().items()],
            "enabled": cfg.enabled,
            "env_override": os.environ.get(ENV_ENABLED),
            "env_name": ENV_ENABLED,
            "model": effective_spec(chosen, settings.KIROCREW_SUMMARY_MODEL),
            "in_use_note": _in_use_note(chosen is not None),
            "configured": settings.KIROCREW_SUMMARY_MODEL,
            "chosen": chosen,
            "options": backend_options(),
        },
    )


def _in_use_note(picked: bool) -> str:
    configured = settings.KIROCREW_SUMMARY_MODEL
    if picked:
        return f"picked here; KIROCREW_SUMMARY_MODEL is {configured}"
    return "KIROCREW_SUMMARY_MODEL; nothing picked here yet"


def _staff_post(request: HttpRequest) -> JsonResponse | None:
    user: Any = request.user
    if not user.is_authenticated:
        return json_error(401, "login_required", "log in first")
    if not user.is_staff:
        return json_error(403, "staff_only", "only staff choose the summary backend")
    return None


@require_http_methods(["POST"])
def settings_backend_test(request: HttpRequest) -> JsonResponse:
    """One short request through the posted backend: its name and latency, or the error
    in plain words. Sends no conversation."""
    if (refused := _staff_post(request)) is not None:
        return refused
    try:
        choice = backend_choice_parse(request.POST)
    except ChoiceRefused as exc:
        return json_error(422, "invalid_backend", str(exc))
    return JsonResponse(_check_body(backend_test(choice)))


def _check_body(result: CheckResult) -> dict[str, Any]:
    if result.ok:
        shape = "" if result.json_reply else " (its reply was not JSON)"
        text = f"{result.model} answered in {result.latency_ms} ms{shape}."
    else:
        # The summary API's own words for a backend failure of this type.
        found = BACKEND_REFUSALS.get(result.error_type)
        lead = found[2] if found else "the summary model failed"
        text = f"{result.model} failed: {lead} ({result.error})."
    return {"ok": result.ok, "model": result.model, "latency_ms": result.latency_ms, "text": text}


@require_http_methods(["POST"])
def settings_backend_use(request: HttpRequest) -> JsonResponse:
    """Store the posted backend as the one that writes summaries (``reset``: forget the
    pick, back to KIROCREW_SUMMARY_MODEL). Says so when summaries are off."""
    if (refused := _staff_post(request)) is not None:
        return refused
    reset = request.POST.get("reset") == "1"
    try:
        choice = None if reset else backend_choice_parse(request.POST)
    except ChoiceRefused as exc:
        return json_error(422, "invalid_backend", str(exc))
    try:
        backend_choice_store(choice)
    except (ConfigWriteError, OSError) as exc:
        return json_error(409, "config_not_written", f"config.json was not changed: {exc}")
    spec = effective_spec(choice, settings.KIROCREW_SUMMARY_MODEL)
    enabled = summary_config().enabled
    text = (
        f"Summaries are now written by {spec}."
        if choice
        else f"Back to the default, {spec} (KIROCREW_SUMMARY_MODEL)."
    )
    if not enabled:
        text += " Session summaries are off, so nothing is written until you turn them on."
    return JsonResponse(
        {
            "ok": True,
            "model": spec,
            "note": _in_use_note(choice is not None),
            "enabled": enabled,
            "text": text,
        }
    )
