"""Summary sidecars on a bare store: identity, invalidation, the write guard, reaping.

Pure: a TranscriptStore on tmp_path, no database. What the panel and the generator rely
on is that a sidecar names exactly the transcript it describes (sig + gen), that writing
it never touches the transcript, and that a write can never bless a stale summary.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest

from summaries.core.sidecar import (
    INTENTS,
    ONE_LINE,
    read_for_panel,
    read_strict,
    sidecar_path,
    write_guarded,
)
from transcripts.core import store as store_module
from transcripts.core.fsutil import write_all as real_write_all
from transcripts.core.store import TranscriptStore

KEY = "dashboard:s1"
PAYLOAD: dict[str, Any] = {
    "intents": [
        {
            "title": "Fix the flaky login test",
            "ranges": [[1, 2]],
            "status": "completed",
            "verified": True,
            "state": "done",
            "last_touched_turn": 2,
            "origin_turn": None,
            "initial_intent": "CI is red one run in five.",
            "progress": ["Fixed the fixture race."],
            "next_steps": [],
        }
    ],
    "constraints": ["Run the suite with -p no:cache"],
    "generated_at": 1760000123.1,
    "user_turns": 2,
    "last_activity": "2026-08-10T10:00:00.000001+00:00",
    "model": "heuristic",
    "duration_ms": 12,
}
T = TypeVar("T")
GIST = {"summary": "Fix the flaky login test [done]", "generated_at": 1760000123.1}


def must(value: T | None) -> T:
    """``value``, asserted present (narrows the Optional for the reader and for mypy)."""
    assert value is not None
    return value


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    store = TranscriptStore(tmp_path / "sessions", fsync="never")
    store.create(KEY, {"title": "First"})
    for i in range(2):
        store.append_row(KEY, "user", f"question {i}")
        store.append_row(KEY, "assistant", f"answer {i}")
    return store


def write_now(store: TranscriptStore, kind: str = INTENTS, payload: dict[str, Any] | None = None):
    """Write ``payload`` for the transcript as it is now; returns the identity used."""
    identity = store.identity(KEY)
    assert identity is not None
    body = payload if payload is not None else (PAYLOAD if kind == INTENTS else GIST)
    assert write_guarded(store, KEY, kind, body, sig=identity.sig, gen=identity.gen)
    return identity


def transcript_state(store: TranscriptStore) -> tuple[bytes, int, int]:
    path = store.path(KEY)
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


# --- round trip and the untouched transcript -------------------------------------------------


def test_round_trip_keeps_payload_and_integer_identity(store):
    identity = write_now(store)

    data = read_strict(store, KEY)
    assert data == {**PAYLOAD, "sig": identity.sig, "gen": identity.gen}
    assert type(data["sig"]) is int
    assert data["sig"] == store.path(KEY).stat().st_mtime_ns
    assert type(data["gen"]) is int
    assert data["gen"] == 0
    for field in ("generated_at", "user_turns", "last_activity", "model", "duration_ms"):
        assert data[field] == PAYLOAD[field]
    assert read_for_panel(store, KEY) == (data, False)
    # The file itself is plain JSON with the identity alongside the payload.
    on_disk = orjson.loads(sidecar_path(store.root, KEY, INTENTS).read_bytes())
    assert on_disk == data


def test_writing_and_reading_never_touch_the_transcript(store):
    before = transcript_state(store)

    write_now(store)
    write_now(store, ONE_LINE)
    read_strict(store, KEY)
    read_for_panel(store, KEY)
    read_strict(store, KEY, ONE_LINE)
    read_for_panel(store, KEY, ONE_LINE)

    assert transcript_state(store) == before


def test_missing_sidecar_reads_as_nothing(store):
    assert read_strict(store, KEY) is None
    assert read_for_panel(store, KEY) == (None, False)


# --- invalidation ------------------------------------------------------------------------------


def _append(store: TranscriptStore) -> None:
    store.append_row(KEY, "user", "one more thing")


def _rotate(store: TranscriptStore) -> None:
    store.rotate(KEY, force=True)


def _rewind(store: TranscriptStore) -> None:
    rows = store.read_file(KEY).rows
    store.rewind(KEY, rows[1]["ts"])  # drop the second exchange


@pytest.mark.parametrize("change", [_append, _rotate, _rewind], ids=["append", "rotate", "rewind"])
def test_a_content_change_invalidates_the_summary(store, change):
    write_now(store)

    change(store)

    assert read_strict(store, KEY) is None
    data, stale = read_for_panel(store, KEY)
    assert stale is True
    assert data is not None
    assert data["intents"] == PAYLOAD["intents"]


@pytest.mark.parametrize("change", [_rotate, _rewind], ids=["rotate", "rewind"])
def test_a_rewrite_that_restores_the_mtime_is_caught_by_gen(store, change):
    """The blind spot of mtime alone: a rewrite keeps sig, so only gen can catch it."""
    identity = write_now(store)

    change(store)

    after = store.identity(KEY)
    assert after is not None
    assert after.sig == identity.sig  # housekeeping restored the mtime
    assert after.gen == identity.gen + 1
    assert read_strict(store, KEY) is None
    assert read_for_panel(store, KEY)[1] is True


def test_a_metadata_only_edit_does_not_invalidate(store):
    identity = write_now(store)
    write_now(store, ONE_LINE)

    assert store.update_metadata(KEY, {"title": "Renamed"})

    after = store.identity(KEY)
    assert (after.sig, after.gen) == (identity.sig, identity.gen)
    assert read_strict(store, KEY) is not None
    assert read_for_panel(store, KEY)[1] is False
    assert read_strict(store, KEY, ONE_LINE) is not None


def test_a_deleted_transcript_leaves_a_surviving_sidecar_stale(store):
    write_now(store)
    body = sidecar_path(store.root, KEY, INTENTS).read_bytes()
    store.path(KEY).unlink()  # only the transcript goes (not a delete_session)

    assert read_strict(store, KEY) is None
    assert read_for_panel(store, KEY) == (orjson.loads(body), True)


def test_a_legacy_sidecar_without_gen_counts_as_gen_zero(store):
    sig = store.identity(KEY).sig
    path = sidecar_path(store.root, KEY, INTENTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    legacy = {"intents": PAYLOAD["intents"], "constraints": [], "sig": sig}
    path.write_bytes(orjson.dumps(legacy))

    assert read_strict(store, KEY) == legacy
    assert read_for_panel(store, KEY) == (legacy, False)

    _rotate(store)  # gen 0 → 1 with the mtime restored
    assert read_strict(store, KEY) is None
    assert read_for_panel(store, KEY) == (legacy, True)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{not json",
        b"\xff\xfe garbage",
        b"[1, 2, 3]",
        b'"a string"',
        b'{"constraints": [], "sig": 1, "gen": 0}',
        b'{"intents": {"title": "x"}, "sig": 1, "gen": 0}',
        b'{"intents": null, "sig": 1, "gen": 0}',
        b'{"intents": [' * 100_000,
    ],
    ids=[
        "empty",
        "truncated",
        "binary",
        "list",
        "string",
        "no-intents",
        "intents-not-list",
        "intents-null",
        "deep",
    ],
)
def test_a_corrupt_or_shapeless_sidecar_reads_as_none_not_stale(store, body):
    path = sidecar_path(store.root, KEY, INTENTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)

    assert read_strict(store, KEY) is None
    assert read_for_panel(store, KEY) == (None, False)


@pytest.mark.parametrize("sig", ["float", "string", "bool"])
def test_a_sidecar_whose_sig_is_not_an_integer_is_never_fresh(store, sig):
    """The original stored a float st_mtime; a strict sig is integer nanoseconds."""
    ns = store.identity(KEY).sig
    value = {"float": ns / 1e9, "string": str(ns), "bool": True}[sig]
    path = sidecar_path(store.root, KEY, INTENTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps({"intents": [], "sig": value, "gen": 0}))

    assert read_strict(store, KEY) is None
    data, stale = read_for_panel(store, KEY)
    assert data is not None
    assert stale is True


# --- the two sidecars and delete ----------------------------------------------------------------


def test_the_two_sidecars_never_clobber_each_other(store):
    identity = write_now(store)
    write_now(store, ONE_LINE)
    intents_path = sidecar_path(store.root, KEY, INTENTS)
    one_line_path = sidecar_path(store.root, KEY, ONE_LINE)
    assert intents_path != one_line_path
    intents_bytes = intents_path.read_bytes()

    newer = {"summary": "A different gist", "generated_at": 2.0}
    assert write_guarded(store, KEY, ONE_LINE, newer, sig=identity.sig, gen=identity.gen)

    assert intents_path.read_bytes() == intents_bytes
    assert read_strict(store, KEY) == {**PAYLOAD, "sig": identity.sig, "gen": identity.gen}
    assert read_strict(store, KEY, ONE_LINE) == {**newer, "sig": identity.sig, "gen": 0}

    other = {**PAYLOAD, "constraints": []}
    one_line_bytes = one_line_path.read_bytes()
    write_now(store, INTENTS, other)
    assert one_line_path.read_bytes() == one_line_bytes
    assert must(read_strict(store, KEY))["constraints"] == []


def test_a_one_line_sidecar_needs_a_summary_string(store):
    identity = write_now(store, ONE_LINE, {"summary": 42})
    assert read_strict(store, KEY, ONE_LINE) is None
    assert read_for_panel(store, KEY, ONE_LINE) == (None, False)
    assert write_guarded(store, KEY, ONE_LINE, GIST, sig=identity.sig, gen=identity.gen)
    assert must(read_strict(store, KEY, ONE_LINE))["summary"] == GIST["summary"]


def test_delete_reaps_both_sidecars_and_the_lock_file(store):
    write_now(store)
    write_now(store, ONE_LINE)

    assert store.delete(KEY) is True

    assert not store.path(KEY).exists()
    assert not sidecar_path(store.root, KEY, INTENTS).exists()
    assert not sidecar_path(store.root, KEY, ONE_LINE).exists()
    assert not store.lock_path(KEY).exists()
    assert read_for_panel(store, KEY) == (None, False)


# --- the write guard ------------------------------------------------------------------------------


def test_the_guard_refuses_to_resurrect_a_deleted_transcript(store):
    identity = store.identity(KEY)
    store.delete(KEY)

    assert not write_guarded(store, KEY, INTENTS, PAYLOAD, sig=identity.sig, gen=identity.gen)
    assert not write_guarded(store, KEY, ONE_LINE, GIST, sig=identity.sig, gen=identity.gen)

    assert not sidecar_path(store.root, KEY, INTENTS).exists()
    assert not sidecar_path(store.root, KEY, ONE_LINE).exists()
    assert not store.path(KEY).exists()


def test_the_guard_refuses_a_snapshot_an_append_made_stale(store):
    write_now(store)
    previous = sidecar_path(store.root, KEY, INTENTS).read_bytes()
    snapshot = store.identity(KEY)
    _append(store)  # lands while the "model" runs

    newer = {**PAYLOAD, "constraints": ["new"]}
    assert not write_guarded(store, KEY, INTENTS, newer, sig=snapshot.sig, gen=snapshot.gen)
    assert sidecar_path(store.root, KEY, INTENTS).read_bytes() == previous


@pytest.mark.parametrize("change", [_rotate, _rewind], ids=["rotate", "rewind"])
def test_the_guard_refuses_a_snapshot_a_rewrite_made_stale(store, change):
    """Same mtime, gen + 1: stamping the current gen would bless the old summary."""
    snapshot = store.identity(KEY)
    change(store)
    assert store.identity(KEY).sig == snapshot.sig

    assert not write_guarded(store, KEY, INTENTS, PAYLOAD, sig=snapshot.sig, gen=snapshot.gen)
    assert not sidecar_path(store.root, KEY, INTENTS).exists()


def test_the_guard_refuses_when_the_transcript_lock_times_out(tmp_path):
    store = TranscriptStore(tmp_path / "sessions", fsync="never", lock_timeout=0.2)
    store.create(KEY, {})
    store.append_row(KEY, "user", "hello")
    identity = must(store.identity(KEY))
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.locked(KEY):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(5)
        assert not write_guarded(store, KEY, INTENTS, PAYLOAD, sig=identity.sig, gen=identity.gen)
    finally:
        release.set()
        holder.join(5)
    assert not sidecar_path(store.root, KEY, INTENTS).exists()
    assert write_guarded(store, KEY, INTENTS, PAYLOAD, sig=identity.sig, gen=identity.gen)


# --- the coarse clock ---------------------------------------------------------------------------


@pytest.fixture
def coarse_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Appends as on a kernel whose mtime tick is coarser than the gap between them: the
    write lands but the file's mtime is pinned (os.utime) to what it was before."""

    def pinned_write_all(fd: int, data: bytes) -> None:
        st = os.fstat(fd)
        real_write_all(fd, data)
        os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))

    monkeypatch.setattr(store_module, "write_all", pinned_write_all)


def test_two_appends_inside_one_clock_tick_still_invalidate(store, coarse_clock):
    first = store.identity(KEY)
    _append(store)
    second = store.identity(KEY)
    assert second.sig > first.sig  # the store moved it although the kernel did not
    write_now(store)
    assert read_strict(store, KEY) is not None

    _append(store)  # same tick again

    third = store.identity(KEY)
    assert third.sig > second.sig
    assert read_strict(store, KEY) is None
    assert read_for_panel(store, KEY)[1] is True
    assert not write_guarded(store, KEY, INTENTS, PAYLOAD, sig=second.sig, gen=second.gen)
