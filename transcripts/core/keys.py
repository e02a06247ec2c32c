"""Session keys, file names and slot names."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^\w\-.]")
SLOT_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
DASHBOARD_PREFIX = "dashboard:"
BARE_PREFIX = "dashboard_"  # DASHBOARD_PREFIX as it reads in a file stem (safe_key)


def safe_key(key: str) -> str:
    """The original's file stem: every char that is not a word char, ``-`` or ``.`` becomes ``_``."""
    return _UNSAFE.sub("_", key)


def is_valid_slot_name(name: str) -> bool:
    return bool(SLOT_NAME_RE.fullmatch(name)) and ".." not in name


def transcript_key_for_slot(slot: str) -> str:
    """Slot ``s1`` lives in transcript ``dashboard:s1`` (the original's ``_history_key_for``)."""
    if slot.startswith(DASHBOARD_PREFIX):
        return slot
    while slot.startswith(BARE_PREFIX):
        slot = slot[len(BARE_PREFIX) :]
    return DASHBOARD_PREFIX + slot


def slot_name_for_key(key: str) -> str:
    """The slot an imported transcript gets: its key without the ``dashboard:`` prefix."""
    return key.removeprefix(DASHBOARD_PREFIX)


def key_from_stem(stem: str) -> str:
    """Best-effort inverse of ``safe_key`` for imported files: ``dashboard_x`` → ``dashboard:x``."""
    if stem.startswith(BARE_PREFIX):
        return DASHBOARD_PREFIX + stem[len(BARE_PREFIX) :]
    return stem
