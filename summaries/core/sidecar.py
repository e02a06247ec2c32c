"""Summary sidecars (``.intents/``, ``.summaries/``) and the pass claim beside them.

A sidecar holds the ``sig`` (``st_mtime_ns``) and ``gen`` (``rotation_generation``) of the
transcript it describes, snapshotted before the model call; the write is refused under
the transcript's lock when either moved, so a delete is never resurrected, an append
never blessed, and a rewrite (same mtime, new gen) cannot make a stale summary look fresh.

One pass per session: a non-blocking ``flock`` on ``.intents/<safe_key>.claim``, held by
an open descriptor. The kernel drops it however the pass ends (kill -9, OOM), and no
expiry lets a second pass start beside a slow one (a database marker's 600 s expiry met
~1,200 s of model time). ``flock``, not ``fcntl`` record locks: those vanish when any
descriptor of the file closes.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from transcripts.core.errors import LockTimeout
from transcripts.core.fsutil import atomic_write, remove_stale_temps
from transcripts.core.keys import safe_key
from transcripts.core.store import Identity, TranscriptStore

from .intents import Intent, StoredSummary
from .payload import evidence_of

log = logging.getLogger(__name__)

INTENTS = "intents"
ONE_LINE = "summaries"
MAX_SIDECAR_BYTES = 8 * 1024 * 1024
# The sidecar layout, known only here: transcripts' delete reaps these files through the
# derived-files hook this app registers (``summaries.apps``, ``transcripts.core.rewrite.register_derived``).
SIDECAR_DIRS = {INTENTS: ".intents", ONE_LINE: ".summaries"}
_ENVELOPE = frozenset(StoredSummary.model_fields) - {"intents", "constraints"}


def sidecar_path(root: Path, key: str, kind: str) -> Path:
    return root / SIDECAR_DIRS[kind] / f"{safe_key(key)}.json"


def _pass_file(root: Path, key: str, suffix: str) -> Path:
    """The pass claim (``.claim``) or wanted mark (``.wanted``): beside the intents
    sidecar, so a delete reaps them."""
    return root / SIDECAR_DIRS[INTENTS] / f"{safe_key(key)}{suffix}"


def sidecar_paths(root: Path, key: str) -> list[Path]:
    """What a session delete reaps."""
    claims = [_pass_file(root, key, ".claim"), _pass_file(root, key, ".wanted")]
    return [*(sidecar_path(root, key, kind) for kind in SIDECAR_DIRS), *claims]


def _matches(data: dict[str, Any], identity: Identity | None) -> bool:
    sig, gen = data.get("sig"), data.get("gen", 0)  # a legacy sidecar without gen: 0
    return (
        identity is not None
        and type(sig) is int
        and type(gen) is int
        and (sig, gen) == (identity.sig, identity.gen)
    )


def _read(store: TranscriptStore, key: str, kind: str) -> dict[str, Any] | None:
    """The sidecar as stored, if it has its kind's shape; corrupt or shapeless is None."""
    path = sidecar_path(store.root, key, kind)
    try:
        if path.stat().st_size > MAX_SIDECAR_BYTES:
            return None
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError, RecursionError):
        return None
    field, shape = ("intents", list) if kind == INTENTS else ("summary", str)
    return data if isinstance(data, dict) and isinstance(data.get(field), shape) else None


def read_strict(
    store: TranscriptStore, key: str, kind: str = INTENTS, *, identity: Identity | None = None
) -> dict[str, Any] | None:
    """The sidecar only if it describes the transcript as it is now (``identity``: a
    snapshot the caller has just taken; else it is read here)."""
    data = _read(store, key, kind)
    if data is None or not _matches(data, identity or store.identity(key)):
        return None
    return data


def read_for_panel(
    store: TranscriptStore, key: str, kind: str = INTENTS
) -> tuple[dict[str, Any] | None, bool]:
    """``(data, stale)``; a stale summary is still served: an empty panel reads as
    "broken", a stale one as "not regenerated yet"."""
    data = _read(store, key, kind)
    if data is None:
        return None, False
    return data, not _matches(data, store.identity(key))


def summary_of(data: dict[str, Any]) -> StoredSummary:
    """An intents sidecar as the payload model, leniently: a bad intent is dropped (never
    the whole summary), evidence checked again (a foreign writer is not trusted), and an
    envelope field of the wrong type reads as absent."""
    intents: list[Intent] = []
    for item in data.get("intents") or []:
        if not isinstance(item, dict):
            continue
        checked = {**item, "evidence": evidence_of(item.get("evidence"))}
        try:
            intents.append(Intent.model_validate(checked))
        except ValidationError:
            continue
    constraints = data["constraints"] if isinstance(data.get("constraints"), list) else []
    fields = {
        **{k: v for k, v in data.items() if k in _ENVELOPE},
        "intents": intents,
        "constraints": [c for c in constraints if isinstance(c, str)],
    }
    try:
        return StoredSummary.model_validate(fields)
    except ValidationError as exc:
        bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
        return StoredSummary.model_validate({k: v for k, v in fields.items() if k not in bad})


def summary_strict(
    store: TranscriptStore, key: str, *, identity: Identity | None = None
) -> StoredSummary | None:
    data = read_strict(store, key, INTENTS, identity=identity)
    return None if data is None else summary_of(data)


def summary_for_panel(store: TranscriptStore, key: str) -> tuple[StoredSummary | None, bool]:
    data, stale = read_for_panel(store, key, INTENTS)
    return (None, False) if data is None else (summary_of(data), stale)


def write_guarded(
    store: TranscriptStore, key: str, kind: str, payload: dict[str, Any], *, sig: int, gen: int
) -> bool:
    """Write ``payload`` + identity iff the transcript still has exactly ``sig`` and ``gen``."""
    path = sidecar_path(store.root, key, kind)
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


def pass_wanted_mark(root: Path, key: str) -> None:
    """Made by every pass before it tries the claim, so one refused while another holds it
    is not lost (the holder, or whoever takes the claim next, answers it)."""
    path = _pass_file(root, key, ".wanted")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))


def pass_wanted_take(root: Path, key: str) -> bool:
    """Whether a pass was wanted since the last take; the record is gone afterwards."""
    try:
        _pass_file(root, key, ".wanted").unlink()
    except FileNotFoundError:
        return False
    return True


class Claim:
    """A held claim; ``release()`` (or the process ending) lets the next pass in."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None


def claim_take(root: Path, key: str) -> Claim | None:
    """The claim of session ``key``, or None while another pass holds it."""
    path = _pass_file(root, key, ".claim")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return Claim(fd)
