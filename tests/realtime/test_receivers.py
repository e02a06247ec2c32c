"""Every announcement becomes its frame: the realtime receivers turn what transcripts and
summaries send (Django signals, after commit) into the typed frames, in order, and never
raise into the sender when a send fails. Announcements no page acts on send nothing."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from kirocrew_site.realtime import receivers
from kirocrew_site.realtime.frames import Frame
from summaries.signals import summary_stored
from transcripts import signals

ISO_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$")


class Sent:
    """Stands in for ``frame_send``: records (slot, wire frame), or fails on demand."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, dict[str, Any]]] = []
        self.fail_first = 0  # this many sends raise, as a channel layer that is down would

    def __call__(self, slot_name: str, frame: Frame) -> None:
        if self.fail_first:
            self.fail_first -= 1
            raise ConnectionError("channel layer down")
        self.frames.append((slot_name, frame.wire()))


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, offline_home: Any) -> Sent:
    """The recorder in place of ``frame_send``. Summaries' own ``turn_ended`` receiver queues
    no pass here (these slots have no database rows: a pass would only fail on them)."""
    monkeypatch.setattr("summaries.receivers.summary_dispatch", lambda slot_name: None)
    recorder = Sent()
    monkeypatch.setattr(receivers, "frame_send", recorder)
    return recorder


def test_rows_appended_sends_one_row_frame_per_row_in_order(sent: Sent):
    signals.rows_appended.send(
        sender=None, slot_name="s1", ts=["t1", "t2"], roles=["user", "assistant"]
    )
    assert sent.frames == [
        ("s1", {"type": "row", "data": {"key": "s1", "ts": "t1", "role": "user"}}),
        ("s1", {"type": "row", "data": {"key": "s1", "ts": "t2", "role": "assistant"}}),
    ]


def test_a_revision_is_a_row_frame_with_role_revision(sent: Sent):
    signals.revision_appended.send(sender=None, slot_name="s1", ts="t9", target_ts="t1")
    assert sent.frames == [
        ("s1", {"type": "row", "data": {"key": "s1", "ts": "t9", "role": "revision"}}),
    ]


def test_turn_start_and_end_send_turn_frames(sent: Sent):
    signals.turn_started.send(sender=None, slot_name="s1")
    signals.turn_ended.send(sender=None, slot_name="s1", stop_reason="max_tokens")
    assert sent.frames == [
        ("s1", {"type": "turn", "data": {"key": "s1", "running": True, "stop_reason": ""}}),
        (
            "s1",
            {"type": "turn", "data": {"key": "s1", "running": False, "stop_reason": "max_tokens"}},
        ),
    ]


def test_a_quiet_turn_end_from_a_one_off_import_sends_no_frame(sent: Sent):
    signals.turn_ended.send(sender=None, slot_name="s1", stop_reason="end_turn", quiet=True)
    assert sent.frames == []


def test_a_stored_summary_sends_the_summary_frame_then_one_notification(sent: Sent):
    summary_stored.send(sender=None, slot_name="s1")
    assert [slot for slot, _ in sent.frames] == ["s1", "s1"]
    summary, note = (frame for _, frame in sent.frames)
    assert summary == {"type": "session_summary", "data": {"key": "s1"}}
    assert note["type"] == "notification"
    assert set(note["data"]) == {"key", "title", "ts"}
    assert (note["data"]["key"], note["data"]["title"]) == ("s1", "Summary updated")
    assert ISO_TS.match(note["data"]["ts"]), note["data"]["ts"]


@pytest.mark.django_db  # summaries' own receiver of a delete reaps its state rows
def test_a_deleted_or_rewritten_session_sends_no_frame(sent: Sent):
    """No page acts on these today: an open page learns of them from its next read."""
    signals.session_deleted.send(sender=None, session_key="k", slot_name="s1")
    signals.session_rewritten.send(sender=None, session_key="k", slot_name="s1", reason="rewind")
    assert sent.frames == []


def test_a_failing_send_never_raises_into_the_sender_and_the_next_frame_still_goes(
    sent: Sent, caplog: pytest.LogCaptureFixture
):
    sent.fail_first = 1
    with caplog.at_level(logging.WARNING, logger=receivers.__name__):
        # ``send``, not ``send_robust``: the receiver itself must contain the failure.
        summary_stored.send(sender=None, slot_name="s1")
        signals.rows_appended.send(sender=None, slot_name="s2", ts=["t1"], roles=["user"])
    assert [frame["type"] for _, frame in sent.frames] == ["notification", "row"]
    assert any(
        "session_summary" in r.getMessage() and "s1" in r.getMessage() for r in caplog.records
    )


def test_a_frame_that_cannot_be_built_is_logged_not_raised(
    sent: Sent, caplog: pytest.LogCaptureFixture
):
    with caplog.at_level(logging.WARNING, logger=receivers.__name__):
        signals.turn_ended.send(sender=None, slot_name="s1", stop_reason=None)
    assert sent.frames == []
    assert any("on_turn_ended" in r.getMessage() for r in caplog.records)
