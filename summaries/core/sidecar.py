"""Summary sidecars: ``.intents/<safe_key>.json`` and ``.summaries/<safe_key>.json``.

A sidecar holds a payload plus the ``sig`` (transcript ``st_mtime_ns``) and ``gen``
(``rotation_generation``) of exactly the transcript it describes. Both are snapshotted by
the CALLER before the model call; the write happens under the transcript's lock and is
refused when the transcript is gone or either half moved, so a delete is never
resurrected, an append during generation is never blessed, and a rewrite (which keeps
the mtime but advances gen) cannot make a stale summary look fresh. The transcript's
bytes and mtime are never touched. The two sidecars have independent writers and never
share a file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson

from transcripts.core.errors import LockTimeout
from transcripts.core.fsutil import atomic_write, remove_stale_temps
from transcripts.core.store import Identity, TranscriptStore

log = logging.getLogger(__name__)

INTENTS = "intents"
ONE_LINE = "summaries"
MAX_SIDECAR_BYTES = 8 * 1024 * 1024


def _load(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > MAX_SIDECAR_BYTES:
            return None
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _gen_of(data: dict[str, Any]) -> int | None:
    gen = data.get("gen", 0)  # legacy sidecars without gen count as generation 0
    return gen if type(gen) is int else None


def _matches(data: dict[str, Any], identity: Identity | None) -> bool:
    sig = data.get("sig")
    return (
        identity is not None
        and type(sig) is int
        and sig == identity.sig
        and _gen_of(data) == identity.gen
    )


def _read(store: TranscriptStore, key: str, kind: str) -> dict[str, Any] | None:
    """The sidecar as stored, if it has its kind's shape; corrupt or shapeless is None."""
    data = _load(store.sidecar_path(key, kind))
    if data is None:
        return None
    well_formed = (
        isinstance(data.get("intents"), list)
        if kind == INTENTS
        else isinstance(data.get("summary"), str)
    )
    return data if well_formed else None


def read_strict(
    store: TranscriptStore, key: str, kind: str = INTENTS, *, identity: Identity | None = None
) -> dict[str, Any] | None:
    """The generator's reader: the sidecar only if it describes the transcript as it is now.

    ``identity`` is a snapshot the caller has just taken, so it is not read a second time;
    without one the transcript's identity is read here.
    """
    data = _read(store, key, kind)
    if data is None:
        return None
    if identity is None:
        identity = store.identity(key)
    return data if _matches(data, identity) else None


def read_for_panel(
    store: TranscriptStore, key: str, kind: str = INTENTS
) -> tuple[dict[str, Any] | None, bool]:
    """The panel's reader: ``(data, stale)``; corrupt or shapeless → ``(None, False)``.

    A stale summary is still served: an empty panel reads as "broken", a stale one as
    "not regenerated yet", which is the truth.
    """
    data = _read(store, key, kind)
    if data is None:
        return None, False
    return data, not _matches(data, store.identity(key))


def write_guarded(
    store: TranscriptStore, key: str, kind: str, payload: dict[str, Any], *, sig: int, gen: int
) -> bool:
    """Write ``payload`` + identity iff the transcript still has exactly ``sig`` and ``gen``."""
    path = store.sidecar_path(key, kind)
    try:
        with store.locked(key):
            current = store.identity(key)
            if current is None or current.sig != sig or current.gen != gen:
                log.info(
                    "sidecar %s for %s refused: transcript %s since the snapshot",
                    kind,
                    key,
                    "is gone" if current is None else "changed",
                )
                return False
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temps(path.parent, path.name)
            body = orjson.dumps({**payload, "sig": sig, "gen": gen})
            atomic_write(path, body, fsync=store.fsync.on_rewrite)
            return True
    except LockTimeout:
        log.warning("sidecar %s for %s refused: transcript lock timed out", kind, key)
        return False
    except OSError as exc:  # disk full, read-only: the previous sidecar stays in place
        log.warning("sidecar %s for %s not written: %s", kind, key, exc)
        return False
