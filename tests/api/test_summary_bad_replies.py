"""Every bad reply shape, through the real pass behind POST …/summary, from a real
loopback process speaking its protocol: the answer is a clear 409 naming the model's
failure (never a 500 or a traceback), nothing is stored, and the previous summary (file,
mirror and turn mark) stays exactly as it was."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest

from tests.fixtures.slots import add_exchanges
from tests.fixtures.summary_snapshot import SummarySnapshot
from tests.summaries.django.conftest import VALID_REPLY
from tests.summaries.fake_anthropic_server import message
from tests.summaries.fake_cli_fixture import FakeCli
from tests.summaries.fake_openai_server import Behaviour
from transcripts.models import Slot

from .conftest import Persona, error_of

URL = "/api/chat/slots/s1/summary"


@pytest.fixture
def previous(owner: Persona, make_slot: Callable[..., Slot], store, enabled_summaries, settings):
    """A summary stored through the POST with the first backend the test configures,
    then one more exchange: the next POST has real work to do."""

    def take(first: Callable[[], None]) -> SummarySnapshot:
        slot = make_slot("s1", app=owner.app, turns=2)
        first()
        assert owner.call("POST", URL).status_code == 200
        add_exchanges(slot, 1, start=2)
        return SummarySnapshot(store, slot.session.key)

    return take


def assert_refused_cleanly(owner: Persona, before: SummarySnapshot, caplog, code: str) -> None:
    with caplog.at_level(logging.INFO):
        response = owner.call("POST", URL)
    assert response.status_code == 409
    assert error_of(response)["code"] == code
    assert before.unchanged()
    assert not [r for r in caplog.records if r.exc_info]  # no traceback anywhere


# --- an OpenAI-compatible server --------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (Behaviour.reply("Sure! The user fixed some bugs."), "summary_bad_reply"),
        (
            Behaviour.reply('{"intents": [{"title": "Fix the lo', finish_reason="length"),
            "summary_bad_reply",
        ),
        (
            Behaviour.reply('{"intents": [{"status": 7, "ranges": "x"}], "constraints": 3}'),
            "summary_bad_reply",
        ),
        (
            Behaviour.raw(
                b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"
            ),
            "summary_bad_reply",
        ),
        (Behaviour.reply("z" * (2 * 1024 * 1024)), "summary_bad_reply"),
        (Behaviour.close(), "summary_model_failed"),
    ],
    ids=[
        "not-json",
        "cut-at-max-tokens",
        "schema-violation",
        "html",
        "2mb-string",
        "connection-reset",
    ],
)
def test_a_bad_openai_reply_keeps_the_previous_summary(
    owner, previous, openai_model, caplog, bad, code
) -> None:
    before = previous(lambda: openai_model.enqueue(Behaviour.reply(VALID_REPLY)))
    openai_model.enqueue(bad, bad)

    assert_refused_cleanly(owner, before, caplog, code)


# --- Anthropic's Messages API -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (message("I cannot help with that."), "summary_bad_reply"),
        (message('{"intents": [{"title": "cu', stop_reason="max_tokens"), "summary_bad_reply"),
        (
            Behaviour.raw(b"<html>Bad gateway</html>", status=200, content_type="text/html"),
            "summary_bad_reply",
        ),
        (Behaviour.close(), "summary_model_failed"),
    ],
    ids=["not-json", "cut-at-max-tokens", "html", "connection-reset"],
)
def test_a_bad_anthropic_reply_keeps_the_previous_summary(
    owner, previous, fake_anthropic, settings, caplog, bad, code
) -> None:
    settings.KIROCREW_SUMMARY_MODEL = "anthropic:claude-test"
    settings.KIROCREW_ANTHROPIC_BASE_URL = fake_anthropic.base_url.removesuffix("/v1")
    settings.ANTHROPIC_API_KEY = fake_anthropic.profile.api_key
    before = previous(lambda: fake_anthropic.enqueue(message(VALID_REPLY)))
    fake_anthropic.enqueue(bad, Behaviour.close())

    assert_refused_cleanly(owner, before, caplog, code)


# --- an agent CLI -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("hang", "summary_model_failed"),
        ("fail", "summary_model_failed"),
        ("garbage", "summary_bad_reply"),
        ("huge", "summary_bad_reply"),
        ("error_result", "summary_bad_reply"),
    ],
)
def test_a_bad_cli_run_keeps_the_previous_summary(
    owner, previous, fake_cli: FakeCli, settings, caplog, mode, code
) -> None:
    settings.KIROCREW_SUMMARY_MODEL = "claude-cli"
    settings.KIROCREW_CLI_TIMEOUT = 1.0
    before = previous(lambda: fake_cli.mode("reply", VALID_REPLY))
    fake_cli.mode(mode)

    assert_refused_cleanly(owner, before, caplog, code)


def test_the_answer_says_what_failed(owner, previous, openai_model) -> None:
    before = previous(lambda: openai_model.enqueue(Behaviour.reply(VALID_REPLY)))
    openai_model.enqueue(Behaviour.reply("{}", finish_reason="length"))
    response = owner.call("POST", URL)
    assert json.loads(response.content)["error"].startswith("the model's reply ran to its length")
    assert before.unchanged()
