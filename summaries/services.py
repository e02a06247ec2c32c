"""The summary pass (DESIGN §5.1): gate, marker, snapshot, read, extract, cache, model,
parse, normalize, quiescence check, guarded write, mirror, push after commit.

Every failure is swallowed and logged with the slot and the reason; the previous summary
stays valid. A pass never raises into a turn.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from django.db import transaction

from transcripts.core import words
from transcripts.core.archive import ROTATE_REASON, is_unlanded, read_header
from transcripts.core.errors import SessionNotFound
from transcripts.core.store import Identity, TranscriptStore
from transcripts.core.tail import read_tail
from transcripts.models import Session, Slot
from transcripts.runtime import get_store

from .core.backends import BackendError
from .core.config import SessionSummaryConfig
from .core.extract import (
    count_user_turns,
    extract_turns,
    extract_turns_from_lines,
    last_activity_ts,
)
from .core.gate import SlotView, is_restricted, should_summarize
from .core.payload import clip_sealed, normalize_payload, seal_payload
from .core.prompt import build_prompt
from .core.reply import parse_reply
from .core.sidecar import INTENTS, ONE_LINE, read_strict, write_guarded
from .core.transcript_turn import TranscriptTurn
from .core.window import WINDOW_BYTES, window_turns
from .marker import marker_active, marker_release, marker_take
from .models import IntentSummary, OneLineSummary
from .push import push_notification, push_session_summary
from .runtime import summary_backend, summary_config

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PassOutcome:
    ok: bool  # a summary is stored now or was already current
    reason: str  # "stored", "current", or why nothing was stored
    # Connected clients should refetch (a summary was written); not part of the verdict.
    announce: bool = field(default=False, compare=False)


def slot_view(slot: Slot) -> SlotView:
    return SlotView(
        in_flight=marker_active(slot),
        memory_mode=slot.session.memory_mode or "",
        running=slot.running,
        last_stop_reason=slot.last_stop_reason or "",
        summary_turn_mark=slot.summary_turn_mark,
    )


def summary_generate(*, slot_name: str, force: bool = False) -> PassOutcome:
    """One summary pass for a slot. ``force`` lifts exactly stop_reason and cadence."""
    cfg = summary_config()
    slot = Slot.objects.select_related("session").filter(name=slot_name).first()
    if slot is None:
        return PassOutcome(False, "slot_not_found")
    reason = should_summarize(cfg, slot_view(slot), None, force=force)
    if reason:
        log.info("Session summary skipped for %s: %s", slot_name, reason)
        return PassOutcome(False, reason)
    token = marker_take(slot.pk)
    if token is None:  # another pass took the marker after our cheap gate read it
        log.info("Session summary skipped for %s: in_flight", slot_name)
        return PassOutcome(False, "in_flight")
    try:
        outcome = _run_pass(slot, cfg, force=force)
    except (Slot.DoesNotExist, SessionNotFound):
        # A permanent delete landed mid-pass: an expected race, not a failure. Nothing
        # was written (the guarded write refuses a vanished transcript).
        outcome = PassOutcome(False, "no_transcript")
    except Exception:
        if not Slot.objects.filter(pk=slot.pk).exists():
            # The same race caught later (the mirror's insert meets the deleted session).
            outcome = PassOutcome(False, "slot_not_found")
        else:
            log.warning("Session summary failed for %s", slot_name, exc_info=True)
            outcome = PassOutcome(False, "error")
    finally:
        marker_release(slot.pk, token)
    if outcome.announce:
        # After the marker is released: a client refetching on this frame must not see
        # the pass still in flight (generate_state "unavailable").
        transaction.on_commit(partial(_announce, slot_name))
    if not outcome.ok:
        log.info("Session summary not stored for %s: %s", slot_name, outcome.reason)
    return outcome


def _run_pass(slot: Slot, cfg: SessionSummaryConfig, *, force: bool) -> PassOutcome:
    store = get_store()
    key = slot.session.key
    on_disk = store.read_metadata(key) or {}
    if is_restricted(on_disk.get("memory_mode")):
        return PassOutcome(False, "memory_mode")  # a stricter on-disk mode wins
    # The snapshot precedes the read: a row appended while the session is read moves
    # sig, so the write below is refused instead of blessing a summary that misses it.
    identity = store.identity(key)
    if identity is None:
        return PassOutcome(False, "no_transcript")
    # A sidecar valid for exactly this sig + gen describes the transcript as it is now,
    # and its user_turns is the count this pass would make (same rule, same rows): the
    # gate and the "current" answer need no byte of the session (an unchanged 100 MB
    # transcript costs a stat and a small file read), in the same order as below. Checked
    # against the snapshot just taken: a second identity read here would guard nothing more.
    current = read_strict(store, key, INTENTS, identity=identity)
    counted = current.get("user_turns") if current is not None else None
    if current is not None and type(counted) is int and counted >= 0:
        slot.refresh_from_db()
        reason = should_summarize(cfg, slot_view(slot), counted, force=force, holding_guard=True)
        if reason:
            return PassOutcome(False, reason)
        return _current(slot, current, counted)
    turns, user_turns = _read_turns(store, key, identity, cfg.assistant_excerpt_chars)
    slot.refresh_from_db()
    reason = should_summarize(cfg, slot_view(slot), user_turns, force=force, holding_guard=True)
    if reason:
        return PassOutcome(False, reason)
    current = read_strict(store, key, INTENTS)
    if current is not None:  # current, without a usable user_turns (an older writer's)
        return _current(slot, current, user_turns)
    if slot.dirty:
        # Quiescence before spending: a write holds its (unexpired) lease, so whatever the
        # model says would be refused after the call. A crashed writer's lease expires.
        return PassOutcome(False, "dirty")

    backend = summary_backend()
    started = time.monotonic()
    try:
        reply = backend.generate(build_prompt(turns), turns)
    except BackendError as exc:
        return PassOutcome(False, f"backend_error:{type(exc).__name__}")
    duration_ms = int((time.monotonic() - started) * 1000)
    payload = normalize_payload(
        parse_reply(reply), max_intents=cfg.max_intents, max_constraints=cfg.max_constraints
    )
    if payload is None:
        return PassOutcome(False, "unusable_reply")

    slot.refresh_from_db()
    if slot.running or slot.dirty:
        # The disk guard cannot see a turn that started in memory during the model call.
        return PassOutcome(False, "discarded:" + ("running" if slot.running else "dirty"))
    payload.update(
        generated_at=time.time(),
        user_turns=user_turns,
        last_activity=last_activity_ts(turns),
        model=backend.name,
        duration_ms=duration_ms,
    )
    payload = seal_payload(payload)  # last step before storing: the added fields too
    if not write_guarded(store, key, INTENTS, payload, sig=identity.sig, gen=identity.gen):
        return PassOutcome(False, "write_refused")
    gist = one_line_gist(payload)
    write_guarded(
        store,
        key,
        ONE_LINE,
        {"summary": gist, "generated_at": payload["generated_at"]},
        sig=identity.sig,
        gen=identity.gen,
    )
    _mirror(slot, payload, gist, identity.sig, identity.gen)
    log.info(
        "Session summary stored for %s (%s, %s)",
        slot.name,
        words.counted(len(payload["intents"]), "intent"),
        words.counted(user_turns, "user turn"),
    )
    return PassOutcome(True, "stored", announce=True)


def _announce(slot_name: str) -> None:
    push_session_summary(slot_name)
    push_notification(slot_name, "Summary updated")


def _current(slot: Slot, sidecar: dict[str, Any], user_turns: int) -> PassOutcome:
    """The stored ``sidecar`` already describes the transcript: nothing to generate; the
    turn mark records the turns it covers. Both "current" answers of the pass end here.

    A mirror that does not match the sidecar (the pass that wrote it died before its
    mirror commit and acks_late redelivered it, or the database was rebuilt from disk) is
    restored from the sidecar, with the push nobody received: the session list reads it.
    """
    sig, gen = sidecar["sig"], sidecar.get("gen", 0)  # read_strict checked both
    if IntentSummary.objects.filter(session_id=slot.session_id, sig=sig, gen=gen).exists():
        Slot.objects.filter(pk=slot.pk).update(summary_turn_mark=user_turns)
        return PassOutcome(True, "current")
    payload = {
        "intents": sidecar["intents"],
        "constraints": sidecar.get("constraints") or [],
        "generated_at": sidecar.get("generated_at") or time.time(),
        "user_turns": user_turns,
        "last_activity": sidecar.get("last_activity"),
        "model": str(sidecar.get("model") or ""),
        "duration_ms": sidecar.get("duration_ms") or 0,
    }
    # Sealed: a sidecar written before extraction redacted user rows may hold a secret.
    payload = seal_payload(payload)
    _mirror(slot, payload, one_line_gist(payload), sig, gen)
    return PassOutcome(True, "current", announce=True)


def _read_turns(
    store: TranscriptStore, key: str, identity: Identity, excerpt_chars: int
) -> tuple[list[TranscriptTurn], int]:
    """The turns the pass reads and the session's genuine user turn count.

    A session longer than the window is read bounded (``_read_window``); any other, or one
    the window cannot stand for, whole (``_read_all``): a short session reads exactly as
    before the window existed.
    """
    bounded = _read_window(store, key, identity, excerpt_chars)
    if bounded is not None:
        return bounded
    turns = _read_all(store, key, excerpt_chars)
    return turns, count_user_turns(turns)


def _read_window(
    store: TranscriptStore, key: str, identity: Identity, excerpt_chars: int
) -> tuple[list[TranscriptTurn], int] | None:
    """The last ``WINDOW_BYTES`` of the session, numbered by the mirror's user turn count.

    The count is trusted only from a mirror of exactly this file (sig, gen and size of the
    snapshot): it is the count of the whole session's fold (``session_sync``). A stale or
    drifted mirror reads the whole session, as does a window that cannot stand for it.
    """
    mirror = Session.objects.filter(key=key).values_list("sig", "gen", "size", "user_turns").first()
    if mirror is None or tuple(mirror[:3]) != (identity.sig, identity.gen, identity.size):
        return None
    paths = _chain(store, key, identity.gen)
    try:
        if sum(p.stat().st_size for p in paths) <= WINDOW_BYTES:
            return None
        tails = read_tail(paths, WINDOW_BYTES, store.max_line, identity.size)
    except OSError:
        return None  # an archive rotated away meanwhile: the full read decides
    turns = window_turns([t.lines for t in tails], mirror[3], assistant_excerpt_chars=excerpt_chars)
    return None if turns is None else (turns, mirror[3])


def _chain(store: TranscriptStore, key: str, gen: int) -> list[Path]:
    """The files of the session, oldest first, chosen by the rules of ``read_session``."""
    paths: list[Path] = []
    for archive in store.archive_paths(key):
        header = read_header(archive) or {}
        if header.get("reason", ROTATE_REASON) != ROTATE_REASON or is_unlanded(header, gen):
            continue
        paths.append(archive)
    paths.append(store.path(key))
    return paths


def _read_all(store: TranscriptStore, key: str, excerpt_chars: int) -> list[TranscriptTurn]:
    """The session's turns; the raw lines' fast path whenever the fold has nothing to do.

    Still one fold: ``session_lines`` answers only for a session without revision records
    (a fork too: its seed rows are in its own file), where the fold is the identity (every
    row as written, in file order), so extracting from the raw lines yields exactly the
    rows ``read_session`` would, minus the cost of building ``meta`` (most of a transcript's bytes). Anything
    else is folded. A helper, so neither the lines nor the folded rows outlive the read
    (the model call that follows can take seconds).
    """
    lines = store.session_lines(key)
    if lines is not None:
        return extract_turns_from_lines(lines, assistant_excerpt_chars=excerpt_chars)
    return extract_turns(store.read_session(key).rows, assistant_excerpt_chars=excerpt_chars)


def one_line_gist(payload: dict[str, Any]) -> str:
    """The session list's one-liner: the most recently touched intent and what is open.

    States are shown as chips beside it, so the gist names goals and counts, not states.
    """
    intents = payload.get("intents") or []
    if not intents:
        return ""
    gist = str(intents[0].get("title", ""))
    others = len(intents) - 1
    open_count = sum(1 for i in intents if i.get("state") in {"in-progress", "needs-you"})
    if others:
        gist += f" (+{others} more)"
    if open_count:
        gist += f" · {open_count} open"
    return clip_sealed(gist, 400)  # redacted around the cut: no half secret survives it


def _mirror(slot: Slot, payload: dict[str, Any], gist: str, sig: int, gen: int) -> None:
    generated_at = dt.datetime.fromtimestamp(payload["generated_at"], tz=dt.UTC)
    intents = payload["intents"]
    with transaction.atomic():
        IntentSummary.objects.update_or_create(
            session=slot.session,
            defaults={
                "payload": {"intents": intents, "constraints": payload["constraints"]},
                "sig": sig,
                "gen": gen,
                "generated_at": generated_at,
                "user_turns": payload["user_turns"],
                "last_activity": payload["last_activity"] or "",
                "model": payload["model"],
                "duration_ms": payload["duration_ms"],
                "intent_count": len(intents),
                "states": ",".join(str(i.get("state", "")) for i in intents)[:400],
            },
        )
        OneLineSummary.objects.update_or_create(
            session=slot.session,
            defaults={"summary": gist, "sig": sig, "gen": gen, "generated_at": generated_at},
        )
        Slot.objects.filter(pk=slot.pk).update(summary_turn_mark=payload["user_turns"])
