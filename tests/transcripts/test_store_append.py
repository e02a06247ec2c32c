"""Appends: the file format, strict sig, torn-tail fencing; revisions, size limits and
redaction at the write boundary have their own files."""

from __future__ import annotations

import itertools
import json
import os
import time
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from tests.transcripts.helpers import (
    KEY,
    contents,
    json_lines,
    kinds,
    line,
    line_zero,
    make_store,
    meta_line,
    raw_lines,
    row,
    set_mtime_ns,
    ticking_store,
    ts_at,
)
from transcripts.core.errors import (
    RecordRejected,
    SessionExists,
    SessionNotFound,
)
from transcripts.core.fold import fold_bytes

# ---------------------------------------------------------------- line 0 and row format


def test_first_append_creates_line_zero_metadata(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "hello")
    meta = line_zero(store.path(KEY))
    assert list(meta)[:3] == ["_type", "created_at", "last_consolidated"]
    assert meta["_type"] == "metadata"
    assert meta["last_consolidated"] == 0
    assert datetime.fromisoformat(meta["created_at"]).tzinfo is not None
    assert "rotation_generation" not in meta  # absent means 0, as in the original
    assert store.identity(KEY).gen == 0  # type: ignore[union-attr]


def test_first_append_seeds_metadata_keys(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    seed = {"title": "T", "app": "crm", "memory_mode": "persistent", "tab_id": "t-1", "x_new": [1]}
    store.append_row(KEY, "user", "hello", metadata=seed)
    store.append_row(KEY, "user", "again", metadata={"title": "ignored once the file exists"})
    meta = line_zero(store.path(KEY))
    assert {k: meta[k] for k in seed} == seed
    assert meta["last_consolidated"] == 0


def test_create_writes_only_metadata_and_refuses_an_existing_session(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    identity = store.create(KEY, {"title": "T"})
    assert [obj["_type"] for obj in json_lines(store.path(KEY))] == ["metadata"]
    assert identity.gen == 0
    assert identity.sig == store.sig(KEY)
    with pytest.raises(SessionExists):
        store.create(KEY)
    assert store.create(KEY, exist_ok=True) == store.identity(KEY)
    assert store.read_session(KEY).rows == []


def test_created_at_is_offset_aware_even_with_a_naive_clock(tmp_path: Path) -> None:
    store = make_store(tmp_path, clock=lambda: datetime(2026, 3, 1, 12, 0))  # noqa: DTZ001
    store.append_row(KEY, "user", "hi")
    meta, first = json_lines(store.path(KEY))
    assert datetime.fromisoformat(meta["created_at"]).tzinfo is not None
    assert datetime.fromisoformat(first["ts"]).tzinfo is not None


def test_row_key_order_is_role_content_ts_then_the_rest(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "q", meta={"mid": "m-1"})
    store.append_row(KEY, "assistant", "a", fields={"source_thread": "dashboard"})
    lines = json_lines(store.path(KEY))
    assert list(lines[1]) == ["role", "content", "ts", "meta"]
    assert list(lines[2]) == ["role", "content", "ts", "source_thread"]


def test_row_key_order_puts_cls_before_ts(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "system", "banner", fields={"cls": "banner-warning"}, meta={"kind": "k"})
    store.append_rows(KEY, [{"role": "system", "content": "x", "meta": {}, "cls": "stopped"}])
    lines = json_lines(store.path(KEY))
    assert list(lines[1]) == ["role", "content", "cls", "ts", "meta"]
    assert list(lines[2]) == ["role", "content", "cls", "ts", "meta"]


def test_lines_are_compact_utf8_json_with_exactly_one_newline(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    content = "naïve → 日本語 \u2028 line\nbreak \x85 😀"
    store.append_row(KEY, "user", content)
    data = store.path(KEY).read_bytes()
    last = raw_lines(store.path(KEY))[-1]
    assert data.count(b"\n") == 2  # line 0 and the row, each ending in exactly one newline
    assert "日本語".encode() in last  # UTF-8, not ASCII escapes
    assert b'","' in last  # compact separators
    assert json.loads(last)["content"] == content


def test_appended_ts_are_returned_and_written(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    result = store.append_rows(KEY, [{"role": "user", "content": c} for c in "abc"])
    assert [r["ts"] for r in json_lines(store.path(KEY))[1:]] == result.ts
    assert len(set(result.ts)) == 3


def test_append_only_appends_bytes(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "one")
    before = store.path(KEY).read_bytes()
    store.append_row(KEY, "assistant", "two")
    store.append_revision(KEY, json_lines(store.path(KEY))[1]["ts"], {"cls": "x"})
    assert store.path(KEY).read_bytes().startswith(before)


def test_append_to_an_original_system_file_keeps_every_byte(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    legacy = (
        json.dumps({"_type": "metadata", "created_at": ts_at(0), "last_consolidated": 0}) + "\n"
    ).encode() + (json.dumps(row("user", "é legacy", ts_at(1))) + "\n").encode()
    store.path(KEY).write_bytes(legacy)
    store.append_row(KEY, "assistant", "new")
    assert store.path(KEY).read_bytes().startswith(legacy)
    assert contents(store.read_session(KEY).rows) == ["é legacy", "new"]


def test_a_row_must_have_a_string_role(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with pytest.raises(RecordRejected):
        store.append_rows(KEY, [{"content": "no role"}])
    assert not store.path(KEY).exists()


@pytest.mark.parametrize("record_type", ["metadata", "revision", "archive", "anything"])
def test_a_row_that_would_read_back_as_another_record_type_is_refused(
    tmp_path: Path, record_type: str
) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "one")
    before = store.path(KEY).read_bytes()
    with pytest.raises(RecordRejected):
        store.append_row(KEY, "assistant", "two", fields={"_type": record_type})
    assert store.path(KEY).read_bytes() == before


# ---------------------------------------------------------------- strict sig and gen


def test_every_append_strictly_advances_sig_even_when_mtime_would_not_move(
    tmp_path: Path,
) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "one")
    path = store.path(KEY)
    future = time.time_ns() + 3_600 * 10**9  # the kernel's new mtime will be below this
    for op in (
        lambda: store.append_row(KEY, "assistant", "two"),
        lambda: store.append_rows(KEY, [{"role": "user", "content": "three"}]),
        lambda: store.append_revision(KEY, json_lines(path)[1]["ts"], {"cls": "x"}),
    ):
        set_mtime_ns(path, future)
        result = op()
        assert store.sig(KEY) == future + 1
        assert result.identity.sig == future + 1
        future += 10


def test_rapid_appends_give_strictly_increasing_sigs(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    sigs = [store.append_row(KEY, "user", str(i)).identity.sig for i in range(50)]
    assert all(b > a for a, b in itertools.pairwise(sigs))


def test_gen_is_unchanged_by_appends(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    first = store.append_row(KEY, "user", "a")
    second = store.append_revision(KEY, first.ts[0], {"cls": "x"})
    assert first.identity.gen == second.identity.gen == 0


def test_identity_reports_sig_gen_and_size(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.identity(KEY) is None
    assert store.sig(KEY) is None
    result = store.append_row(KEY, "user", "a")
    st = store.path(KEY).stat()
    assert result.identity == store.identity(KEY)
    assert (result.identity.sig, result.identity.size) == (st.st_mtime_ns, st.st_size)


# ---------------------------------------------------------------- torn tails (D8)

DAMAGED_TAILS = {
    "partial-json": b'{"role":"user","content":"cut he',
    "partial-multibyte": b'{"role":"user","content":"\xe6\x87',
    "nul-garbage": b"\x00" * 4096,
    "valid-unterminated": line(row("assistant", "no newline", ts_at(3)))[:-1],
    "crlf": line(row("assistant", "crlf", ts_at(3)))[:-1] + b"\r\n",
    "blank-line": b"\n",
}


@pytest.mark.parametrize("tail", DAMAGED_TAILS.values(), ids=DAMAGED_TAILS.keys())
def test_append_after_a_damaged_tail_starts_on_a_fresh_line(tmp_path: Path, tail: bytes) -> None:
    store = make_store(tmp_path)
    path = store.path(KEY)
    damaged = meta_line() + line(row("user", "q", ts_at(1))) + line(row("user", "r", ts_at(2)))
    damaged += tail
    path.write_bytes(damaged)
    before = store.read_file(KEY)
    store.append_row(KEY, "assistant", "the new record")
    data = path.read_bytes()
    assert data.startswith(damaged)  # every byte of the fragment is still there
    new_part = data[len(damaged) :]
    fence = b"" if damaged.endswith(b"\n") else b"\n"
    assert new_part.startswith(fence)
    new_line = new_part[len(fence) :]
    assert new_line.count(b"\n") == 1
    assert json.loads(new_line)["content"] == "the new record"
    after = store.read_file(KEY)
    assert after.rows == [*before.rows, after.rows[-1]]
    assert after.rows[-1]["content"] == "the new record"
    # The fragment stays one reported line; it is never glued to the new record.
    skipped = [a for a in before.report.anomalies if a.kind != "unterminated"]
    assert len([a for a in after.report.anomalies if a.kind != "unterminated"]) == len(skipped)


def test_bom_file_keeps_metadata_through_appends(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    path = store.path(KEY)
    path.write_bytes(b"\xef\xbb\xbf" + meta_line(title="bom") + line(row("user", "q", ts_at(1))))
    store.append_row(KEY, "assistant", "a")
    folded = store.read_file(KEY)
    assert folded.metadata is not None
    assert folded.metadata["title"] == "bom"
    assert contents(folded.rows) == ["q", "a"]
    assert [a.kind for a in folded.report.anomalies] == ["bom"]
    assert store.read_metadata(KEY) == folded.metadata


def test_append_after_a_torn_tail_then_read_reports_the_fragment_once(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "q")
    path = store.path(KEY)
    with path.open("ab") as fp:
        fp.write(b'{"role":"assistant","con')
    offset = path.stat().st_size - len(b'{"role":"assistant","con')
    store.append_row(KEY, "assistant", "a")
    store.append_row(KEY, "user", "q2")
    assert kinds(store.read_file(KEY)) == [("bad_json", offset)]


# ---------------------------------------------------------------- misc


def test_read_session_of_a_missing_key_is_session_not_found(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with pytest.raises(SessionNotFound):
        store.read_session(KEY)
    with pytest.raises(FileNotFoundError):
        store.read_file(KEY)


def test_read_metadata_is_none_when_line_zero_is_not_metadata(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.path(KEY).write_bytes(line(row("user", "q", ts_at(1))))
    assert store.read_metadata(KEY) is None
    assert store.read_metadata("dashboard:missing") is None


def test_fold_of_the_written_file_equals_stdlib_parsing(tmp_path: Path) -> None:
    store = ticking_store(tmp_path)
    for i in range(10):
        store.append_row(KEY, "user" if i % 2 == 0 else "assistant", f"m{i} é\u2028", meta={"i": i})
    data = store.path(KEY).read_bytes()
    folded = fold_bytes(data)
    assert folded.rows == [json.loads(x) for x in data.split(b"\n")[1:-1]]
    assert folded.metadata == orjson.loads(data.split(b"\n")[0])


def test_lock_file_is_created_next_to_the_transcript(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.append_row(KEY, "user", "q")
    assert store.lock_path(KEY).exists()
    assert oct(os.stat(store.lock_path(KEY)).st_mode & 0o777) == oct(0o600)


def test_an_append_that_may_not_create_never_resurrects_a_deleted_session(tmp_path):
    """The check happens under the lock: a session deleted a moment before a late append
    (a pass, a runner) is refused, not re-created as a file with an empty line 0."""
    store = ticking_store(tmp_path)
    store.append_row("dashboard:gone", "user", "hello", metadata={"title": "t"})
    assert store.delete("dashboard:gone")
    with pytest.raises(SessionNotFound):
        store.append_rows(
            "dashboard:gone", [{"role": "assistant", "content": "late"}], create=False
        )
    assert not store.path("dashboard:gone").exists()
