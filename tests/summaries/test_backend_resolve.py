"""resolve_backend: backend specs (heuristic, openai:<model>) resolve through the registry
to configured backends, and unknown or incomplete specs are rejected."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

from summaries.core.backends import (
    BACKENDS,
    ClaudeCliBackend,
    CodexCliBackend,
    OpenAIBackend,
    SummaryBackend,
    register_backend,
    resolve_backend,
)
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries.openai_backend_helpers import (
    API_KEY,
)

# --- resolve_backend -----------------------------------------------------------------------


class StubHeuristic:
    name = "heuristic"

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        return "{}"


class Settings:
    """The settings an openai: backend reads, as django.conf.settings would hold them."""

    def __init__(self, base_url: str | None = "http://127.0.0.1:11434/v1") -> None:
        self.KIROCREW_OPENAI_BASE_URL = base_url
        self.KIROCREW_OPENAI_API_KEY = API_KEY
        self.KIROCREW_OPENAI_TIMEOUT = 12.5
        self.KIROCREW_OPENAI_MAX_TOKENS = 777
        self.KIROCREW_OPENAI_RETRY_BACKOFF = 0.5
        self.KIROCREW_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
        self.ANTHROPIC_API_KEY = ""
        self.KIROCREW_ANTHROPIC_TIMEOUT = 30.0
        self.KIROCREW_ANTHROPIC_MAX_TOKENS = 1000
        self.KIROCREW_CLAUDE_CLI = "claude"
        self.KIROCREW_CODEX_CLI = "codex"
        self.KIROCREW_CLI_TIMEOUT = 60.0


def resolve(
    spec: str,
    *,
    base_url: str | None = "http://127.0.0.1:11434/v1",
    heuristic_factory: Callable[[], SummaryBackend] | None = None,
) -> SummaryBackend:
    registry = dict(BACKENDS)
    if heuristic_factory is not None:
        registry["heuristic"] = lambda rest, settings: heuristic_factory()
    return resolve_backend(spec, Settings(base_url), registry=registry)


def test_resolve_heuristic_uses_the_factory():
    stub = StubHeuristic()
    assert resolve("heuristic", heuristic_factory=lambda: stub) is stub
    assert resolve(" heuristic\n", heuristic_factory=lambda: stub) is stub


def test_the_registry_resolves_each_prefix():
    from summaries.core.heuristic import HeuristicBackend

    assert set(BACKENDS) == {
        "heuristic",
        "openai:",
        "anthropic:",
        "claude-cli",
        "claude-cli:",
        "codex-cli",
        "codex-cli:",
    }
    assert isinstance(resolve("heuristic"), HeuristicBackend)
    assert isinstance(resolve("openai:m"), OpenAIBackend)
    assert isinstance(resolve("claude-cli"), ClaudeCliBackend)
    assert isinstance(resolve("codex-cli:gpt-5"), CodexCliBackend)


def test_a_new_registration_is_picked_up(monkeypatch):
    """Adding a backend is one factory and one registration line: nothing else changes."""
    monkeypatch.setattr("summaries.core.backends.BACKENDS", dict(BACKENDS))
    from summaries.core import backends

    seen: list[tuple[str, object]] = []

    def stub_factory(rest: str, settings: object) -> SummaryBackend:
        seen.append((rest, settings))
        return StubHeuristic()

    register_backend("stub:", stub_factory)
    settings = Settings()
    assert isinstance(backends.resolve_backend(" stub:tiny-model ", settings), StubHeuristic)
    assert seen == [("tiny-model", settings)]
    with pytest.raises(ValueError, match=re.escape("'stub:<...>'")):  # listed too
        backends.resolve_backend("nope", settings)
    # exact names match exactly; only a prefix ending in ":" takes a rest
    register_backend("plain", stub_factory)
    assert isinstance(backends.resolve_backend("plain", settings), StubHeuristic)
    with pytest.raises(ValueError, match="unknown KIROCREW_SUMMARY_MODEL"):
        backends.resolve_backend("plainer", settings)
    with pytest.raises(ValueError, match="non-empty word"):
        register_backend(" spaced", stub_factory)


def test_resolve_openai_builds_the_configured_backend():
    def no_heuristic() -> SummaryBackend:
        raise AssertionError("the heuristic must not be built for an openai: spec")

    backend = resolve("openai:gpt-4o-mini", heuristic_factory=no_heuristic)
    assert isinstance(backend, OpenAIBackend)
    assert backend.name == "openai:gpt-4o-mini"
    assert backend.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert (backend.timeout, backend.max_tokens) == (12.5, 777)


def test_resolve_openai_model_with_colons_and_tags():
    backend = resolve(" openai: llama3.1:8b ")
    assert backend.name == "openai:llama3.1:8b"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("", "unknown"),
        ("openai", "unknown"),
        ("gpt-4o-mini", "unknown"),
        ("Heuristic", "unknown"),
        ("claude", "unknown"),
        ("anthropic:claude", "needs ANTHROPIC_API_KEY"),
        ("anthropic:", "needs a model name"),
        ("openai:", "needs a model name"),
        ("openai:   ", "needs a model name"),
    ],
)
def test_resolve_rejects_unknown_specs(spec, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        resolve(spec)
    assert API_KEY not in str(info.value)


@pytest.mark.parametrize("base_url", [None, "", "  "])
def test_resolve_openai_needs_a_base_url(base_url):
    with pytest.raises(ValueError, match="KIROCREW_OPENAI_BASE_URL"):
        resolve("openai:gpt-4o-mini", base_url=base_url)
