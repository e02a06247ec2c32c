"""What the writer refuses or changes before a byte reaches disk: size limits, redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.transcripts.helpers import (
    KEY,
    github_token,
    json_lines,
    kinds,
    line,
    make_store,
    raw_lines,
)
from transcripts.core.errors import (
    RecordRejected,
)

# ---------------------------------------------------------------- size limits


def test_writer_refuses_a_row_larger_than_max_line_before_writing_a_byte(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_line=1000)
    store.append_row(KEY, "user", "q")
    before = store.path(KEY).read_bytes()
    mtime = store.sig(KEY)
    with pytest.raises(RecordRejected):
        store.append_row(KEY, "assistant", "x" * 1000)
    with pytest.raises(RecordRejected):
        store.append_revision(KEY, json_lines(store.path(KEY))[1]["ts"], {"content": "y" * 1000})
    assert store.path(KEY).read_bytes() == before
    assert store.sig(KEY) == mtime


def test_append_rows_is_all_or_nothing(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_line=1000)
    store.append_row(KEY, "user", "q")
    before = store.path(KEY).read_bytes()
    with pytest.raises(RecordRejected):
        store.append_rows(
            KEY,
            [
                {"role": "assistant", "content": "fine"},
                {"role": "assistant", "content": "x" * 2000},
            ],
        )
    with pytest.raises(RecordRejected):
        store.append_rows(
            KEY, [{"role": "assistant", "content": "fine"}, {"role": "x", "content": object()}]
        )
    assert store.path(KEY).read_bytes() == before


def test_a_refused_first_append_leaves_no_transcript_behind(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_line=1000)
    with pytest.raises(RecordRejected):
        store.append_row(KEY, "assistant", "x" * 2000)
    assert not store.exists(KEY)
    assert store.keys_on_disk() == []


def test_a_row_of_exactly_max_line_bytes_is_accepted_and_read(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_line=400)
    store.append_row(KEY, "user", "q")
    probe = line({"role": "assistant", "content": "", "ts": json_lines(store.path(KEY))[1]["ts"]})
    content = "x" * (400 - len(probe))
    store.append_row(KEY, "assistant", content)
    assert len(raw_lines(store.path(KEY))[-1]) + 1 == 400
    folded = store.read_file(KEY)
    assert folded.rows[-1]["content"] == content
    assert kinds(folded) == []


# ---------------------------------------------------------------- redaction at the write boundary


def test_user_rows_are_stored_exactly_as_typed(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    token = github_token()
    store.append_row(KEY, "user", f"my token is {token}", meta={"note": token})
    data = store.path(KEY).read_bytes()
    assert data.count(token.encode()) == 2


@pytest.mark.parametrize("role", ["assistant", "system", "tool", "tool_result", "error"])
def test_non_user_rows_are_redacted_before_they_touch_disk(tmp_path: Path, role: str) -> None:
    store = make_store(tmp_path)
    token = github_token()
    result = store.append_row(
        KEY,
        role,
        f"here it is: {token}",
        meta={"output": f"env GITHUB_TOKEN={token}", "nested": [{"deep": token}], "n": 3},
    )
    data = store.path(KEY).read_bytes()
    assert token.encode() not in data
    assert token[:12].encode() not in data
    stored = store.read_file(KEY).rows[0]
    assert stored["content"].startswith("here it is: ")
    assert stored["meta"]["n"] == 3
    assert result.redactions  # a value-free report of what was replaced


def test_revision_patches_are_redacted_before_they_touch_disk(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    target = store.append_row(KEY, "user", "run it").ts[0]
    token = github_token()
    store.append_revision(KEY, target, {"meta": {"output": [f"token={token}"]}, "note": token})
    assert token.encode() not in store.path(KEY).read_bytes()


def test_redaction_leaves_ordinary_text_alone(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    text = "The fix is in list_sessions(); run `pytest -q` and check 3 files."
    store.append_row(KEY, "assistant", text, meta={"mid": "m-0123456789abcdef"})
    stored = store.read_file(KEY).rows[0]
    assert stored["content"] == text
    assert stored["meta"] == {"mid": "m-0123456789abcdef"}
