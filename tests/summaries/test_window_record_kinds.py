"""The bounded pass's window sees every declared row-changing kind (``codec.ROW_CHANGES``),
not only ``revision``: a window holding one is folded, never read as raw lines."""

from __future__ import annotations

import pytest

from summaries.core.window import window_turns
from transcripts.core import codec
from transcripts.core.codec import encode_record


def test_a_declared_kind_in_the_window_is_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(codec.ROW_CHANGES, "reword", lambda record: {"content": record["text"]})
    stamps = [f"2026-03-01T12:00:0{i}+00:00" for i in range(6)]
    records = [
        {"role": "user", "content": "first question", "ts": stamps[0]},
        {"role": "assistant", "content": "first answer", "ts": stamps[1]},
        {"role": "user", "content": "second question", "ts": stamps[2]},
        {"role": "assistant", "content": "second answer", "ts": stamps[3]},
        {"role": "user", "content": "third question", "ts": stamps[4]},
        {"_type": "reword", "target_ts": stamps[3], "text": "reworded answer", "ts": stamps[5]},
    ]
    lines = [encode_record(record)[:-1] for record in records]
    turns = window_turns([lines], 3, assistant_excerpt_chars=1000)
    assert turns is not None
    assert [(t.role, t.text) for t in turns] == [
        ("user", "second question"),
        ("assistant", "reworded answer"),
        ("user", "third question"),
    ]
