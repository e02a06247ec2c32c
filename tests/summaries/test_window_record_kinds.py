"""The bounded pass's window sees every declared row-changing kind (``codec.ROW_CHANGES``),
not only ``revision``: the tail it reads is folded, never read as raw lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from summaries.core.extract import window_turns
from tests.transcripts.helpers import make_store
from transcripts.core import codec
from transcripts.core.codec import encode_record


def test_a_declared_kind_in_the_window_is_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(codec.ROW_CHANGES, "reword", lambda record: {"content": record["text"]})
    stamps = [f"2026-03-01T12:00:0{i}+00:00" for i in range(6)]
    records = [
        {"_type": "metadata", "title": "window"},
        {"role": "user", "content": "first question", "ts": stamps[0]},
        {"role": "assistant", "content": "first answer", "ts": stamps[1]},
        {"role": "user", "content": "second question", "ts": stamps[2]},
        {"role": "assistant", "content": "second answer", "ts": stamps[3]},
        {"role": "user", "content": "third question", "ts": stamps[4]},
        {"_type": "reword", "target_ts": stamps[3], "text": "reworded answer", "ts": stamps[5]},
    ]
    store = make_store(tmp_path / "sessions")
    store.root.mkdir(parents=True)
    path = store.path("dashboard_window")
    path.write_bytes(b"".join(encode_record(record) for record in records))
    identity = store.identity("dashboard_window")
    assert identity is not None
    # The window: all but line 0 (metadata), so the chain does not fit in it.
    rows = store.read_session_tail("dashboard_window", identity, path.stat().st_size - 1)
    assert rows is not None
    turns = window_turns(rows, 3, assistant_excerpt_chars=1000)
    assert turns is not None
    assert [(t.role, t.text) for t in turns] == [
        ("user", "second question"),
        ("assistant", "reworded answer"),
        ("user", "third question"),
    ]
