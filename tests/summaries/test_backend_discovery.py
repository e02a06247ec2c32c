"""Discovery of summary backends (pure core): a local OpenAI-compatible server is offered
by the models it lists at GET /models (a real server on loopback), only when it answers
with a model list and within the listing's time bound; the probes run side by side and
never send a prompt. The stored pick reads back exactly, and a malformed one is ignored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from summaries.core.config import (
    BackendChoice,
    effective_spec,
    load_config,
    read_choice,
    write_choice,
    write_enabled,
)
from summaries.core.discovery import OptionKind, discover_backends, probe_servers
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer, closed_port


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAIServer]]:
    started = [FakeOpenAIServer().start() for _ in range(3)]
    yield started
    for server in started:
        server.stop()


def test_models_of_an_answering_server_are_offered_and_nothing_else_is_asked(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.models = ("llama3", "qwen2.5", "llama3")
    options = discover_backends(
        "heuristic",
        local_urls=[f"http://127.0.0.1:{closed_port()}/v1", fake_openai.base_url + "/"],
        which=lambda program: None,
        cli_commands=[("claude-cli", "claude")],
        anthropic_key_set=False,
    )
    assert [(o.spec, o.kind, o.base_url) for o in options] == [
        ("heuristic", OptionKind.CONFIGURED, ""),
        ("openai:llama3", OptionKind.LOCAL_SERVER, fake_openai.base_url),
        ("openai:qwen2.5", OptionKind.LOCAL_SERVER, fake_openai.base_url),
    ]
    assert [(r.method, r.path, r.body) for r in fake_openai.requests] == [
        ("GET", "/v1/models", b"")
    ]
    assert "authorization" not in fake_openai.requests[0].headers


@pytest.mark.parametrize(
    "answer",
    [
        Behaviour.error(500),
        Behaviour.error(404, code="not_found"),
        Behaviour.json({"object": "list"}),  # no data
        Behaviour.json([{"id": "x"}]),  # not an object
        Behaviour.raw(b"<html>not json</html>", content_type="text/html"),
        Behaviour.json({"data": [{"id": "bad\nname"}, {"id": 7}, {"id": "  "}]}),
        Behaviour.raw(b'{"data": [' + b'{"id": "m"},' * 40_000 + b'{"id": "m"}]}'),  # oversize
        Behaviour.close(),
    ],
    ids=["500", "404", "no-data", "a-list", "html", "no-usable-names", "oversize", "dropped"],
)
def test_a_server_that_does_not_list_models_is_not_offered(
    fake_openai: FakeOpenAIServer, answer: Behaviour
) -> None:
    fake_openai.default = answer
    assert all(not server.models for server in probe_servers([fake_openai.base_url]))
    options = discover_backends(
        "heuristic",
        local_urls=[fake_openai.base_url],
        which=lambda program: None,
        cli_commands=[],
        anthropic_key_set=False,
    )
    assert [o.kind for o in options] == [OptionKind.CONFIGURED]


def test_a_server_answering_after_the_listing_bound_is_left_out(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.default = Behaviour.sleep(3, Behaviour.json({"data": [{"id": "late"}]}))
    assert probe_servers([fake_openai.base_url], timeout=10, budget=0.2) == []


def test_servers_are_probed_side_by_side(servers: list[FakeOpenAIServer]) -> None:
    """Three servers that each take 1 s all make a 2.5 s bound: one after another, the
    third would not."""
    for i, server in enumerate(servers):
        server.default = Behaviour.sleep(1.0, Behaviour.json({"data": [{"id": f"m{i}"}]}))
    found = probe_servers([s.base_url for s in servers], timeout=5, budget=2.5)
    assert [s.models for s in found] == [("m0",), ("m1",), ("m2",)]


def test_clis_on_path_and_an_anthropic_key_are_offered() -> None:
    where = {"claude": "/opt/bin/claude"}
    options = discover_backends(
        "openai:remote",
        local_urls=[],
        which=where.get,
        cli_commands=[("claude-cli", "claude"), ("codex-cli", "codex")],
        anthropic_key_set=True,
    )
    assert [(o.spec, o.kind) for o in options] == [
        ("openai:remote", OptionKind.CONFIGURED),
        ("claude-cli", OptionKind.CLI),
        ("anthropic:", OptionKind.API),
        ("heuristic", OptionKind.CONFIGURED),  # the offline floor is always on offer
    ]
    assert options[2].needs_model
    assert "/opt/bin/claude" in options[1].label


def test_a_pick_is_stored_beside_the_summary_switch_and_forgotten_on_reset(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.json"
    write_enabled(path, True)
    choice = BackendChoice("openai:llama3", "http://127.0.0.1:11434/v1")
    write_choice(path, choice)
    assert read_choice(path) == choice
    assert effective_spec(read_choice(path), "heuristic") == "openai:llama3"
    assert load_config(path).enabled is True  # the switch is untouched
    write_choice(path, None)
    assert read_choice(path) is None
    assert effective_spec(None, "heuristic") == "heuristic"
    assert json.loads(path.read_text()) == {"session_summary": {"enabled": True}}


@pytest.mark.parametrize(
    "section",
    [
        "openai:x",
        {"spec": ""},
        {"spec": 3},
        {"spec": "openai:x\n"},
        {"spec": "openai:x", "base_url": ["http://a"]},
        {"spec": "x" * 400},
    ],
)
def test_a_malformed_pick_reads_as_none(tmp_path: Path, section: object) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"summary_backend": section}))
    assert read_choice(path) is None
