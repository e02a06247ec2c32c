"""One C-speed scan that tells which fast-path triggers a text (or a whole row) holds.

The triggers are :func:`.views.might_contain_secret`'s: a run of ``WINDOW_MIN_RUN``
window characters, a ``FAST_PATH_ANCHORS`` literal, or a ``FAST_PATH_LOWER_ANCHORS``
literal in any ASCII case. One literal at a time (~15 scans, plus a view per string)
made write-boundary redaction ~10x an orjson parse of an import's bytes; with
``hyperscan`` (a pinned requirement) they are one database, scanned once. Without it
:func:`scan` returns None and callers keep the per-literal checks, exact too.

Scanning UTF-8 instead of the latin-1 view is exact: every trigger is ASCII, and a
non-ASCII character is bytes >= 0x80 in UTF-8 and >= 0x80 or "?" in the view. A row's
compact JSON holds every string of the row (keys included) with its ASCII characters
in place (JSON escapes only '"', '\\' and control characters, in no trigger), so a row
whose JSON has no trigger has no string with one.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import orjson

from . import patterns as P

# Trigger ids: the exact anchors, then the ASCII-caseless ones, then the window run.
EXACT: tuple[bytes, ...] = tuple(a.encode("ascii") for a in P.FAST_PATH_ANCHORS)
CASELESS: tuple[bytes, ...] = tuple(a.encode("ascii") for a in P.FAST_PATH_LOWER_ANCHORS)
WINDOW_ID = len(EXACT) + len(CASELESS)
# Window characters map to 1: a window is a run of WINDOW_NEEDLE in the mapped bytes.
WINDOW_MAP = bytes(1 if chr(i) in P.WINDOW_CHARS else 0 for i in range(256))
WINDOW_NEEDLE = b"\x01" * P.WINDOW_MIN_RUN

Found = frozenset[int]
NOTHING: Found = frozenset()

# Not a fast-path trigger but a finer fact for the write boundary: a key = value keyword
# followed by a separator (a superset of ``patterns.assignments``' keys, without their
# look-behinds and owners), or ``--password VALUE`` (the "cli" rule). Those keywords open
# no other rule, so a text whose only triggers are them, without this, cannot change
# (``redaction._redact``). It occurs only with one of them: ``bool(found)`` is unchanged.
ASSIGNMENT_SEP_ID = WINDOW_ID + 1
ASSIGNMENT_KEYWORDS = (b"pass", b"pwd", b"secret", b"key", b"token")
ASSIGNMENT_ONLY: Found = frozenset(
    len(EXACT) + CASELESS.index(word) for word in ASSIGNMENT_KEYWORDS if word in CASELESS
)
_ASSIGNMENT_SEP = (
    rb"""(?:pass(?:word|wd|phrase)?|pwd|secret|key|token)(?:\\?["'])?[ \t]*[:=]"""
    rb"""|--pass(?:word|wd)?[ \t]"""
)


def _hex(literal: bytes) -> bytes:
    return b"".join(b"\\x%02x" % c for c in literal)


def _compile() -> Any:
    try:
        import hyperscan
    except ImportError:  # pragma: no cover - another platform: the per-literal path
        return None
    # SINGLEMATCH: each trigger reports once per scan, so a text full of "key" costs
    # one callback, not one per occurrence.
    once, caseless = hyperscan.HS_FLAG_SINGLEMATCH, hyperscan.HS_FLAG_CASELESS
    window = b"[%s]{%d}" % (_hex(bytes(sorted(P.WINDOW_CHARS.encode()))), P.WINDOW_MIN_RUN)
    expressions = [*map(_hex, EXACT + CASELESS), window, _ASSIGNMENT_SEP]
    flags = [once] * len(EXACT) + [once | caseless] * len(CASELESS) + [once, once | caseless]
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=expressions,
        ids=list(range(len(expressions))),
        elements=len(expressions),
        flags=flags,
    )
    return db, hyperscan.Scratch


# Loaded and compiled on first use (~0.1-0.3 s), not at import: every process imports
# the redaction package, most never redact. One compile per process, under a lock.
_ENGINE: tuple[Any, Any] | None = None
_LOADED = False
_LOAD_LOCK = threading.Lock()
# A scratch space may serve one scan at a time: one per thread (the ASGI thread pool,
# the summary workers and an import can redact at the same moment).
_LOCAL = threading.local()


def _after_fork_in_child() -> None:
    # A lock another thread held at fork() would stay held forever in the child.
    global _LOAD_LOCK, _LOCAL
    _LOAD_LOCK, _LOCAL = threading.Lock(), threading.local()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _engine() -> tuple[Any, Any] | None:
    global _ENGINE, _LOADED
    if not _LOADED:
        with _LOAD_LOCK:
            if not _LOADED:
                _ENGINE = _compile()
                _LOADED = True
    return _ENGINE


def available() -> bool:
    return _engine() is not None


def scan(data: bytes) -> Found | None:
    """The trigger ids occurring in ``data`` (UTF-8), or None without hyperscan."""
    engine = _engine()
    if engine is None:
        return None
    if not data:
        return NOTHING
    db, scratch_type = engine
    scratch = getattr(_LOCAL, "scratch", None)
    if scratch is None:
        scratch = _LOCAL.scratch = scratch_type(db)
    hits: list[int] = []

    def on_match(trigger: int, _start: int, _end: int, _flags: int, _ctx: object) -> None:
        hits.append(trigger)

    db.scan(data, match_event_handler=on_match, scratch=scratch)
    return frozenset(hits) if hits else NOTHING


def scan_text(text: str) -> Found | None:
    # surrogatepass: a lone surrogate (legal in a Python str) becomes three bytes >= 0x80.
    return scan(text.encode("utf-8", "surrogatepass")) if _engine() is not None else None


# Without hyperscan: the same condition on the ASCII-lowercased JSON, with only the
# literals that no other literal's presence already implies ("token" covers "Token",
# "key" covers "AccessKeyId"). A superset of the exact condition, so still sound.
_LOWERED = {a.lower() for a in EXACT} | set(CASELESS)
_MINIMAL = tuple(sorted(a for a in _LOWERED if not any(b != a and b in a for b in _LOWERED)))


def _may_hold_secret_slow(data: bytes) -> bool:
    if WINDOW_NEEDLE in data.translate(WINDOW_MAP):
        return True
    low = data.lower()
    return any(a in low for a in _MINIMAL)


def value_may_hold_secret(value: Any) -> bool:
    """False only if no string of ``value`` (values and keys, at any depth) can be redacted.

    One scan of its compact JSON instead of a check per string. A value orjson cannot
    encode (a lone surrogate, a huge integer, a non-string key) answers True: the
    caller's string-by-string redaction decides.
    """
    try:
        data = orjson.dumps(value)
    except TypeError:
        return True
    found = scan(data)
    return _may_hold_secret_slow(data) if found is None else bool(found)
