"""Keys, file names and slot names, as the original system spells them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.transcripts.helpers import make_store
from transcripts.core.keys import (
    is_valid_slot_name,
    key_from_stem,
    safe_key,
    slot_name_for_key,
    transcript_key_for_slot,
)


@pytest.mark.parametrize(
    ("key", "stem"),
    [
        ("dashboard:chat-1", "dashboard_chat-1"),
        ("thread:with/special chars!", "thread_with_special_chars_"),
        ("dashboard:s1", "dashboard_s1"),
        ("slack:1712345678.123456", "slack_1712345678.123456"),  # dots survive
        ("dashboard:café_ü", "dashboard_café_ü"),  # Unicode word characters survive
        ("a/../b", "a_.._b"),
        ("x\ny\tz", "x_y_z"),
    ],
)
def test_safe_key_matches_the_reference(key: str, stem: str) -> None:
    assert safe_key(key) == stem


def test_store_paths_use_the_safe_key(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.path("dashboard:s1") == tmp_path / "dashboard_s1.jsonl"
    assert store.lock_path("dashboard:s1") == tmp_path / "dashboard_s1.jsonl.lock"
    assert store.archive_dir == tmp_path / "archive"


def test_a_key_can_never_name_a_path_outside_the_sessions_dir(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    for key in ("../../etc/passwd", "/abs/path", "a/b", "..", "dashboard:../x"):
        path = store.path(key)
        assert path.parent == tmp_path
        assert "/" not in path.name


@pytest.mark.parametrize(
    ("slot", "key"),
    [
        ("s1", "dashboard:s1"),
        ("dashboard:s1", "dashboard:s1"),
        ("dashboard_s1", "dashboard:s1"),
        ("dashboard_dashboard_s1", "dashboard:s1"),
        ("research-notes", "dashboard:research-notes"),
    ],
)
def test_slot_maps_to_a_dashboard_transcript_key(slot: str, key: str) -> None:
    assert transcript_key_for_slot(slot) == key


def test_slot_and_key_round_trip() -> None:
    for slot in ("s1", "coder-demo", "a.b", "x:y"):
        assert slot_name_for_key(transcript_key_for_slot(slot)) == slot
    assert slot_name_for_key("thread:abc") == "thread:abc"


@pytest.mark.parametrize(
    ("stem", "key"),
    [
        ("dashboard_starter", "dashboard:starter"),
        ("dashboard_research-notes", "dashboard:research-notes"),
        ("legacy", "legacy"),
    ],
)
def test_imported_stem_maps_back_to_a_key_with_the_same_file(stem: str, key: str) -> None:
    assert key_from_stem(stem) == key
    assert safe_key(key) == stem


@pytest.mark.parametrize("name", ["s1", "a", "A.b_c:d-e", "0" + "x" * 127])
def test_valid_slot_names(name: str) -> None:
    assert is_valid_slot_name(name)


@pytest.mark.parametrize(
    "name",
    ["", "-x", ".x", "a/b", "..", "a..b", "x" * 129, "a b", "a\x00", "a\n", "é", "a?b"],
)
def test_invalid_slot_names(name: str) -> None:
    assert not is_valid_slot_name(name)
