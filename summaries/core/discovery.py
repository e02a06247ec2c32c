"""Which summary backends this machine can reach, for the settings page (no prompt sent:
local servers' ``GET {base}/models`` in parallel under one short bound, CLIs on PATH, the
Anthropic API when keyed), and one tiny test request through a picked one."""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

from .backends import HEURISTIC, BackendError, SummaryBackend
from .backends.http import endpoint_url, http_client, read_capped

PROBE_TIMEOUT = 1.0  # seconds one server probe may take (connect + answer)
LISTING_BUDGET = 1.5  # seconds the whole listing may take, whatever the servers do
MAX_MODELS_BYTES = 256 * 1024  # a model list is a few KB; more is not a model server's answer
MAX_MODELS = 50  # models shown per server


class OptionKind(enum.Enum):
    CONFIGURED = "configured"  # KIROCREW_SUMMARY_MODEL or the stored choice
    LOCAL_SERVER = "local_server"  # an OpenAI-compatible server that answered /models
    CLI = "cli"  # claude / codex on PATH
    API = "api"  # a hosted API whose key is set (the model is typed in)


@dataclass(frozen=True, slots=True)
class BackendOption:
    spec: str  # what KIROCREW_SUMMARY_MODEL would say; "anthropic:" wants a model typed in
    kind: OptionKind
    label: str  # how the page names where it comes from
    base_url: str = ""  # a local server's address (its /v1 base)

    @property
    def needs_model(self) -> bool:
        return self.spec.endswith(":")


@dataclass(frozen=True, slots=True)
class ServerModels:
    base_url: str
    models: tuple[str, ...]


def probe_models(base_url: str, timeout: float) -> ServerModels | None:
    """The model ids an OpenAI-compatible server lists at ``{base_url}/models``; None when
    nothing answers there in ``timeout`` seconds or the answer is not a model list."""
    try:
        url = endpoint_url(base_url, "/models", setting="KIROCREW_LOCAL_MODEL_URLS")
    except ValueError:
        return None
    deadline = time.monotonic() + timeout
    try:
        with (
            http_client(timeout, None) as client,
            client.stream("GET", url, headers={"Accept": "application/json"}) as response,
        ):
            if response.status_code != 200:
                return None
            raw = read_capped(response, MAX_MODELS_BYTES, deadline, timeout)
        body = json.loads(raw)
    except Exception:  # refused, timed out, oversize, broken, not JSON: not a server to offer
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    ids = [item.get("id") for item in data if isinstance(item, dict)]
    names = [
        i
        for i in ids
        if isinstance(i, str) and i.strip() and len(i) <= 200 and i.isprintable() and i == i.strip()
    ]
    return ServerModels(base_url.rstrip("/"), tuple(dict.fromkeys(names))[:MAX_MODELS])


def probe_servers(
    base_urls: Sequence[str], *, timeout: float = PROBE_TIMEOUT, budget: float = LISTING_BUDGET
) -> list[ServerModels]:
    """Every server in ``base_urls`` that answered, in the given order; all probed at once,
    and whatever has not answered after ``budget`` seconds is left out."""
    urls = list(dict.fromkeys(u.strip() for u in base_urls if u.strip()))
    if not urls:
        return []
    pool = ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="model-probe")
    try:
        futures = [pool.submit(probe_models, u, timeout) for u in urls]
        wait(futures, timeout=budget)
        found = [f.result() for f in futures if f.done() and not f.cancelled()]
    finally:
        # Never joined: a late probe ends by its own timeout, the page does not wait.
        pool.shutdown(wait=False, cancel_futures=True)
    return [server for server in found if server is not None]


def discover_backends(
    configured: str,
    *,
    local_urls: Sequence[str],
    which: Callable[[str], str | None],
    cli_commands: Sequence[tuple[str, str]],
    anthropic_key_set: bool,
) -> list[BackendOption]:
    """The configured backend, every model of every local server that answered, the agent
    CLIs on PATH (``cli_commands``: ``(spec, program)``), ``anthropic:`` when keyed."""
    options = [
        BackendOption(configured, OptionKind.CONFIGURED, "KIROCREW_SUMMARY_MODEL, the default")
    ]
    for server in probe_servers(local_urls):
        where = f"local server at {server.base_url}"
        for model in server.models:
            spec = f"openai:{model}"
            options.append(BackendOption(spec, OptionKind.LOCAL_SERVER, where, server.base_url))
    for spec, program in cli_commands:
        if path := which(program):
            options.append(BackendOption(spec, OptionKind.CLI, f"{program} on PATH ({path})"))
    if anthropic_key_set:
        options.append(BackendOption("anthropic:", OptionKind.API, "ANTHROPIC_API_KEY is set"))
    if configured != HEURISTIC:
        options.append(BackendOption(HEURISTIC, OptionKind.CONFIGURED, "offline, no model"))
    unique: dict[tuple[str, str], BackendOption] = {}
    for option in options:
        unique.setdefault((option.spec, option.base_url), option)
    return list(unique.values())


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
    text = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        json.loads(text)
    except ValueError:
        return CheckResult(True, backend.name, elapsed)
    return CheckResult(True, backend.name, elapsed, json_reply=True)
