"""Files derived from a session that its owner keeps next to the transcripts (a summary's
sidecars): the store knows no layout, only who to ask.

An owner registers how to find its files for a key (``register_derived``, e.g. in an
``AppConfig.ready()``); a session delete reaps what every owner names, so no derived file
outlives its transcript. Rewind and rotation leave derived files in place: an owner
records the transcript identity (sig + gen) its file was made for and judges staleness
itself (a stale summary is still shown as such until it is regenerated).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path

# (sessions root, session key) -> the owner's files for that session (existing or not).
DerivedPaths = Callable[[Path, str], Iterable[Path]]

_OWNERS: dict[str, DerivedPaths] = {}


def register_derived(name: str, paths_for_key: DerivedPaths) -> None:
    """Register (or replace: registering twice is harmless) the owner ``name``."""
    _OWNERS[name] = paths_for_key


def derived_paths(root: Path, key: str) -> list[Path]:
    """Every registered owner's files for ``key``, owners in registration order."""
    return [path for paths_for_key in _OWNERS.values() for path in paths_for_key(root, key)]


def reap_derived(root: Path, key: str) -> None:
    """Remove every registered owner's files for ``key``; missing ones are fine."""
    for path in derived_paths(root, key):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
