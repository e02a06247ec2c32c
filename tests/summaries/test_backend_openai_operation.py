"""Operating a real model server: what the client leaves behind when it gives up, and how
it reads the answers of a server that runs out of context or generates a runaway reply.
Against the loopback server generating token by token, as llama.cpp does."""

from __future__ import annotations

import pytest

from summaries.core.backends import BackendContextOverflow, BackendRunaway, BackendTimeout
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer, ServerProfile
from tests.summaries.openai_backend_helpers import PROMPT, REPLY, TURNS, make_backend

LONG = '{"intents": [' + ", ".join(['{"title": "step"}'] * 500) + "]}"


def test_a_timed_out_generation_ends_on_the_server_and_is_not_sent_again(
    fake_openai: FakeOpenAIServer,
) -> None:
    """A client timeout on a single-slot server: the generation nobody waits for stops when
    the connection closes (streamed), and no retry queues a second one behind it."""
    fake_openai.profile = ServerProfile(single_slot=True)
    fake_openai.enqueue(Behaviour.generate(LONG, token_delay=0.05), Behaviour.reply(REPLY))

    with pytest.raises(BackendTimeout):
        make_backend(fake_openai, timeout=0.3).generate(PROMPT, TURNS)

    [generation] = fake_openai.wait_generations(1)
    assert generation.client_left
    assert generation.stopped_early  # the slot was freed, not held to the end
    assert len(fake_openai.requests) == 1
    # The slot is free for the next pass at once.
    assert make_backend(fake_openai, timeout=5).generate(PROMPT, TURNS) == REPLY


def test_the_request_asks_for_a_stream(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(Behaviour.generate(REPLY, token_delay=0.001))
    assert make_backend(fake_openai).generate(PROMPT, TURNS) == REPLY
    assert fake_openai.requests[0].json["stream"] is True
    [generation] = fake_openai.wait_generations(1)
    assert not generation.client_left


def test_a_streamed_reply_cut_at_max_tokens_is_a_runaway(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(
        Behaviour.generate('{"intents": [{"title": "cu', token_delay=0.001, finish_reason="length")
    )
    with pytest.raises(BackendRunaway):
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert len(fake_openai.requests) == 1


def test_a_prompt_over_the_context_window_is_a_typed_overflow_not_retried(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.profile = ServerProfile(context_chars=len(PROMPT) // 2)
    with pytest.raises(BackendContextOverflow) as info:
        make_backend(fake_openai).generate(PROMPT, TURNS)
    assert info.value.code == "context_length_exceeded"
    assert len(fake_openai.requests) == 1
