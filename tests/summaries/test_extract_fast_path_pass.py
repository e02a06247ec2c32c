"""The summary pass's fast path: ``TranscriptStore.session_lines`` + ``extract_turns_from_lines``.

``session_lines`` hands out the session's raw lines only when the fold has nothing to do
(no revision record in any file it chains, not a fork); then extracting from those lines
must give exactly the turns the fold + ``extract_turns`` give. Otherwise it answers None
and the pass folds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from summaries.core.extract import extract_turns, extract_turns_from_lines
from summaries.core.transcript_turn import TranscriptTurn
from tests.transcripts.helpers import make_store
from transcripts.core.archive import write_archive
from transcripts.core.errors import SessionNotFound
from transcripts.core.store import TranscriptStore

KEY = "dashboard_fast"


def fold_path(store: TranscriptStore, key: str = KEY) -> list[TranscriptTurn]:
    return extract_turns(store.read_session(key).rows)


def fast_path(store: TranscriptStore, key: str = KEY) -> list[TranscriptTurn]:
    lines = store.session_lines(key)
    assert lines is not None
    return extract_turns_from_lines(lines)


def exchange(store: TranscriptStore, i: int, key: str = KEY) -> None:
    store.append_rows(
        key,
        [
            {"role": "user", "content": f"Please fix bug {i} in the export view."},
            {
                "role": "assistant",
                "content": f"Fixed bug {i}; the export test passes. " + "detail " * 40,
                "meta": {"tool_calls": [{"name": "shell", "output": "x" * 300}], "i": i},
            },
        ],
        metadata={"title": "fast path"} if i == 0 else None,
    )


@pytest.fixture
def rotated(tmp_path: Path) -> TranscriptStore:
    """A session whose early rows live in several rotate archives, no revision anywhere."""
    store = make_store(tmp_path / "sessions", max_bytes=4_000, keep_lines=4)
    for i in range(12):
        exchange(store, i)
    assert len(store.archive_paths(KEY)) >= 3
    return store


def test_with_archives_and_no_revision_both_paths_give_the_same_turns(rotated):
    turns = fold_path(rotated)
    assert fast_path(rotated) == turns
    # Every exchange is there, archived ones first, in order.
    users = [t.text for t in turns if t.role == "user"]
    assert users == [f"Please fix bug {i} in the export view." for i in range(12)]
    assert [t.user_turn for t in turns if t.role == "user"] == list(range(1, 13))


def test_the_lines_are_the_archives_oldest_first_then_the_file(rotated):
    lines = rotated.session_lines(KEY)
    assert lines is not None
    expected: list[bytes] = []
    for path in [*rotated.archive_paths(KEY), rotated.path(KEY)]:
        expected.extend(path.read_bytes().split(b"\n")[:-1])
    assert lines == expected


def test_archives_the_session_does_not_own_are_left_out_on_both_paths(rotated):
    # A rewind's archive (rows dropped from the session) and an unlanded rotate archive
    # (its rotation never replaced the file: the rows are still in the file).
    rotated.append_rows(
        KEY, [{"role": "user", "content": "one more"}, {"role": "assistant", "content": "ok"}]
    )
    keep = rotated.read_file(KEY).rows[-3]["ts"]
    assert rotated.rewind(KEY, keep) == 2
    assert any(b'"reason":"rewind"' in p.read_bytes() for p in rotated.archive_paths(KEY))
    gen = rotated.identity(KEY).gen
    ghost = orjson.dumps({"role": "user", "content": "ghost", "ts": "2099-01-01T00:00:00+00:00"})
    write_archive(
        rotated.archive_dir,
        KEY,
        [ghost],
        "rotate",
        now=rotated.clock(),
        fsync=False,
        generation=gen + 1,
    )
    turns = fold_path(rotated)
    assert fast_path(rotated) == turns
    texts = [t.text for t in turns]
    assert "one more" not in texts
    assert "ghost" not in texts


def test_odd_lines_are_kept_or_skipped_exactly_as_the_fold_does(tmp_path):
    store = make_store(tmp_path / "sessions")
    exchange(store, 0)
    path = store.path(KEY)
    ts = "2026-03-01T12:00:00.000001+00:00"
    with path.open("ab") as fp:
        fp.write(b"\n")  # blank
        fp.write(b"{not json\n")
        fp.write(b"[1, 2]\n")  # not an object
        fp.write(b'{"_type": "metadata", "title": "stray"}\n')  # a stray record
        fp.write(b'{"role": "user", "content": "lone \\ud800 surrogate", "ts": "' + b"x" + b'"}\n')
        fp.write(b'{"role": "user", "content": "numeric ts", "ts": 12}\n')
        # Text about revision records is content, not a revision record.
        fp.write(
            orjson.dumps(
                {"role": "user", "content": 'grep \'"_type":"revision"\' x.jsonl', "ts": ts}
            )
            + b"\n"
        )
        fp.write(b'{"role": "assistant", "content": "torn but whole", "ts": "' + b"y" + b'"}')
    turns = fold_path(store)
    assert fast_path(store) == turns
    texts = [t.text for t in turns]
    assert "numeric ts" in texts
    assert "torn but whole" in texts
    assert any("revision" in t for t in texts)


def test_a_leading_bom_is_dropped_like_the_fold_drops_it(tmp_path):
    store = make_store(tmp_path / "sessions")
    path = store.path(KEY)
    path.parent.mkdir(parents=True)
    row = {"role": "user", "content": "first row, no metadata", "ts": "2026-03-01T12:00:00+00:00"}
    path.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(row) + b"\n")
    assert fast_path(store) == fold_path(store)
    assert [t.text for t in fold_path(store)] == ["first row, no metadata"]


def test_oversize_lines_are_dropped_at_the_stores_limit(tmp_path):
    store = make_store(tmp_path / "sessions", max_line=2_000)
    exchange(store, 0)
    big = {"role": "user", "content": "y" * 3_000, "ts": "2026-03-01T12:00:00.000001+00:00"}
    with store.path(KEY).open("ab") as fp:
        fp.write(orjson.dumps(big) + b"\n")
    lines = store.session_lines(KEY)
    assert lines is not None
    assert all(len(line) <= 2_000 for line in lines)
    assert extract_turns_from_lines(lines) == fold_path(store)


# --- when only the fold can read the session ---------------------------------------------------


def test_a_revision_in_the_file_means_none(rotated):
    target = rotated.read_file(KEY).rows[-1]["ts"]
    rotated.append_revision(KEY, target, {"content": "patched by a revision"})
    assert rotated.session_lines(KEY) is None
    assert fold_path(rotated)[-1].text == "patched by a revision"


@pytest.mark.parametrize("spacing", [b'"_type":"revision"', b'"_type": "revision"'])
def test_a_revision_in_a_chained_archive_means_none(rotated, spacing):
    oldest = rotated.archive_paths(KEY)[0]
    rows = [orjson.loads(x) for x in oldest.read_bytes().split(b"\n")[1:] if x]
    patch = orjson.dumps({"target_ts": rows[0]["ts"], "patch": {"content": "p"}, "ts": "z"})
    with oldest.open("ab") as fp:
        fp.write(b"{" + spacing + b"," + patch[1:] + b"\n")
    assert rotated.session_lines(KEY) is None


def test_a_revision_in_an_archive_the_session_does_not_chain_is_ignored(rotated):
    revision: dict[str, Any] = {"_type": "revision", "target_ts": "t", "patch": {"a": 1}}
    write_archive(
        rotated.archive_dir,
        KEY,
        [orjson.dumps({**revision, "ts": "2026-01-01T00:00:00+00:00"})],
        "rewind",
        now=rotated.clock(),
        fsync=False,
    )
    assert fast_path(rotated) == fold_path(rotated)


def test_a_fork_takes_the_fast_path_over_its_own_seed(rotated):
    """The seed rows are copied into the fork's file, so the fold is the identity there too;
    a later owner of the parent's name never shows up in either path."""
    rotated.fork(KEY, "dashboard_child")
    exchange(rotated, 99, key="dashboard_child")
    seeded = fold_path(rotated, "dashboard_child")
    assert fast_path(rotated, "dashboard_child") == seeded
    rotated.delete(KEY)
    exchange(rotated, 500, key=KEY)  # someone else's session under the parent's name
    assert fast_path(rotated, "dashboard_child") == fold_path(rotated, "dashboard_child")
    assert fold_path(rotated, "dashboard_child") == seeded


def test_a_missing_session_raises_like_read_session(tmp_path):
    store = make_store(tmp_path / "sessions")
    with pytest.raises(SessionNotFound):
        store.session_lines("dashboard_nobody")


# --- the pass takes the fast path when it is safe, and the fold otherwise ----------------------


@pytest.fixture
def pass_env(
    offline_home: Path, summaries_on_via_env: None, monkeypatch: pytest.MonkeyPatch, db: None
) -> list[str]:
    """Summaries on with the offline backend; records which reader the pass used."""
    used: list[str] = []
    lines, fold = TranscriptStore.session_lines, TranscriptStore.read_session

    def spy_lines(self: TranscriptStore, key: str) -> list[bytes] | None:
        out = lines(self, key)
        used.append("lines" if out is not None else "lines:none")
        return out

    def spy_fold(self: TranscriptStore, key: str, **kw: Any) -> Any:
        used.append("fold")
        return fold(self, key, **kw)

    monkeypatch.setattr(TranscriptStore, "session_lines", spy_lines)
    monkeypatch.setattr(TranscriptStore, "read_session", spy_fold)
    return used


def test_the_pass_reads_raw_lines_when_nothing_needs_folding(pass_env, make_slot, store):
    from summaries.core.sidecar import read_strict
    from summaries.services import PassOutcome, PassResult, summary_generate

    key = make_slot("fast", turns=3).session.key
    pass_env.clear()  # the set-up's own reads
    assert summary_generate(slot_name="fast") == PassOutcome(PassResult.STORED)
    assert pass_env == ["lines"]
    data = read_strict(store, key)
    assert data is not None
    assert data["user_turns"] == 3


def test_the_pass_folds_a_session_with_a_revision(pass_env, make_slot, store):
    from summaries.core.sidecar import read_strict
    from summaries.services import PassOutcome, PassResult, summary_generate

    key = make_slot("folded", turns=3).session.key
    target = store.read_file(key).rows[-1]["ts"]
    store.append_revision(key, target, {"content": "Fixed bug 2 after all, tests pass."})
    pass_env.clear()
    assert summary_generate(slot_name="folded") == PassOutcome(PassResult.STORED)
    assert pass_env == ["lines:none", "fold"]
    data = read_strict(store, key)
    assert data is not None
    assert data["user_turns"] == 3
