"""One short request through a real backend, so a person can see it works before picking
it: which model answered and how long it took, or what failed in the backend's own safe
words. The prompt is tiny and carries no conversation."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from .backends import BackendError, SummaryBackend

CHECK_PROMPT = (
    'This is a connection test. Reply with exactly this JSON and nothing else: {"ok": true}'
)


@dataclass(frozen=True, slots=True)
class CheckResult:
    ok: bool
    model: str  # the backend's name, as its summaries would record it
    latency_ms: int
    error_type: str = ""  # the BackendError subclass's name when it failed
    error: str = ""  # its message (safe to show: no key, no prompt)
    json_reply: bool = False  # the reply parsed as JSON (a model that follows the format)


def backend_check(backend: SummaryBackend) -> CheckResult:
    started = time.monotonic()
    try:
        reply = backend.generate(CHECK_PROMPT, [])
    except BackendError as exc:
        elapsed = int((time.monotonic() - started) * 1000)
        return CheckResult(False, backend.name, elapsed, type(exc).__name__, str(exc))
    elapsed = int((time.monotonic() - started) * 1000)
    return CheckResult(True, backend.name, elapsed, json_reply=_is_json(reply))


def _is_json(reply: str) -> bool:
    text = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
