"""The summary pass (DESIGN §5.1): gate, claim, snapshot, read, model, checks, quiescence,
guarded write, mirror, push after commit. A pass never raises: every failure is logged and
the previous summary stays valid.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from functools import partial

from django.conf import settings
from django.db import transaction

from transcripts.core import words
from transcripts.core.errors import SessionNotFound
from transcripts.core.store import Identity, TranscriptStore
from transcripts.models import Session, Slot
from transcripts.runtime import get_store

from .core.backends import BackendBadReply, BackendContextOverflow, BackendError, SummaryBackend
from .core.config import SessionSummaryConfig
from .core.extract import (
    WINDOW_BYTES,
    count_user_turns,
    extract_turns,
    last_activity_ts,
    window_turns,
)
from .core.gate import PassOutcome, PassResult, is_restricted, should_summarize
from .core.intents import StoredSummary, SummaryPayload, is_open
from .core.payload import clip_sealed, seal_model
from .core.prompt import OVERFLOW_SHRINKS, build_incremental_prompt, build_prompt, shrunk_budget
from .core.reply import shape_reply
from .core.sidecar import (
    INTENTS,
    ONE_LINE,
    claim_take,
    pass_wanted_mark,
    pass_wanted_take,
    read_for_panel,
    sidecar_path,
    summary_for_panel,
    summary_of,
    summary_strict,
    write_guarded,
)
from .core.transcript_turn import TranscriptTurn
from .models import IntentSummary, OneLineSummary
from .runtime import summary_backend, summary_config, summary_input_budget
from .selectors import slot_view
from .signals import summary_stored, summary_wanted
from .state import (
    pass_done,
    pass_started,
    pass_superseded,
    summary_backoff_active,
    summary_backoff_clear,
    summary_backoff_start,
    summary_turn_mark_set,
)

__all__ = ["PassOutcome", "PassResult", "one_line_gist", "summary_generate"]

log = logging.getLogger(__name__)


def summary_generate(
    *, slot_name: str, force: bool = False, asked: dt.datetime | None = None
) -> PassOutcome:
    """One summary pass for a slot. ``force`` lifts exactly stop_reason and cadence.
    ``asked``: the stamp of the request it answers (``state.pass_requested``); a later
    pending request supersedes it."""
    if asked is not None and pass_superseded(slot_name, asked):
        log.info("Session summary skipped for %s: superseded", slot_name)
        return PassOutcome(PassResult.SUPERSEDED)
    cfg = summary_config()
    slot = Slot.objects.select_related("session").filter(name=slot_name).first()
    if slot is None:
        return PassOutcome(PassResult.SLOT_NOT_FOUND)
    started = pass_started()
    # The claim, not the "generating" flag, excludes a second pass: checked by taking it.
    refusal = should_summarize(cfg, slot_view(slot), None, force=force)
    if refusal is None and not force and summary_backoff_active(slot.pk):
        refusal = PassOutcome(PassResult.BACKING_OFF)
    if refusal is not None:
        pass_done(slot.pk, started)  # this request's pass ended here: no longer "generating"
        log.info("Session summary skipped for %s: %s", slot_name, refusal.label)
        return refusal
    root, key = get_store().root, slot.session.key
    # Marked before the claim is tried: a pass refused below is run again by the holder,
    # which may have read the transcript before this request's turn end (it was lost).
    pass_wanted_mark(root, key)
    claim = claim_take(root, key)
    if claim is None:  # another pass runs for this session; it clears the flag when done
        log.info("Session summary skipped for %s: in_flight", slot_name)
        return PassOutcome(PassResult.IN_FLIGHT)
    pass_wanted_take(root, key)  # this pass reads the transcript after every mark so far
    try:
        outcome = _run_pass(slot, cfg, force=force)
        if outcome.reason is PassResult.TOO_FEW_TURNS and summary_clear_beyond(slot):
            # A rewind left fewer turns than the stored summary covers: it described turns
            # that no longer exist, and no pass can replace it yet. Gone, and said so.
            outcome = PassOutcome(PassResult.TOO_FEW_TURNS, CLEARED, announce=True)
    except (Slot.DoesNotExist, SessionNotFound):
        # A permanent delete landed mid-pass: an expected race, not a failure. Nothing
        # was written (the guarded write refuses a vanished transcript).
        outcome = PassOutcome(PassResult.NO_TRANSCRIPT)
    except Exception:
        if not Slot.objects.filter(pk=slot.pk).exists():
            # The same race caught later (the mirror's insert meets the deleted session).
            outcome = PassOutcome(PassResult.SLOT_NOT_FOUND)
        else:
            log.warning("Session summary failed for %s", slot_name, exc_info=True)
            outcome = PassOutcome(PassResult.ERROR)
    finally:
        try:
            pass_done(slot.pk, started)
        finally:
            claim.release()
    if pass_wanted_take(root, key):
        # Asked for while this pass ran, after its read: one more pass, queued as a turn
        # end's (under Celery: superseded by a later one, after the settle).
        transaction.on_commit(
            partial(summary_wanted.send_robust, sender=IntentSummary, slot_name=slot_name)
        )
    if outcome.announce:
        # After the flag is cleared: a client refetching on this frame must not see the
        # pass still "generating".
        transaction.on_commit(partial(_announce, slot_name))
    if not outcome.ok:
        log.log(
            logging.WARNING if outcome.reason.failed else logging.INFO,
            "Session summary not stored for %s: %s%s",
            slot_name,
            outcome.label,
            f" ({outcome.note})" if outcome.note else "",
        )
    return outcome


def _run_pass(slot: Slot, cfg: SessionSummaryConfig, *, force: bool) -> PassOutcome:
    store = get_store()
    key = slot.session.key
    on_disk = store.read_metadata(key) or {}
    if is_restricted(on_disk.get("memory_mode")):
        return PassOutcome(PassResult.MEMORY_MODE)  # a stricter on-disk mode wins
    # The snapshot precedes the read: a row appended while the session is read moves
    # sig, so the write below is refused instead of blessing a summary that misses it.
    identity = store.identity(key)
    if identity is None:
        return PassOutcome(PassResult.NO_TRANSCRIPT)
    # A sidecar valid for exactly this sig + gen describes the transcript as it is now, with
    # the user_turns this pass would count: the gate and the "current" answer need no byte
    # of the session (an unchanged 100 MB transcript costs a stat and a small file read).
    current = summary_strict(store, key, identity=identity)
    if current is not None and (counted := current.user_turns) is not None:
        slot.refresh_from_db()
        refusal = should_summarize(cfg, slot_view(slot), counted, force=force)
        return refusal or _current(slot, current, identity, counted)
    turns, user_turns = _read_turns(store, key, identity, cfg.assistant_excerpt_chars)
    slot.refresh_from_db()
    refusal = should_summarize(cfg, slot_view(slot), user_turns, force=force)
    if refusal is not None:
        return refusal
    # Against the transcript as it is now: a pass may have written the sidecar meanwhile.
    now = store.identity(key)
    if now is not None and (current := summary_strict(store, key, identity=now)) is not None:
        return _current(slot, current, now, user_turns)  # without a usable user_turns
    if slot.dirty:
        # Quiescence before spending: a write holds its (unexpired) lease, so whatever the
        # model says would be refused after the call. A crashed writer's lease expires.
        return PassOutcome(PassResult.DIRTY)

    backend = summary_backend()
    started = time.monotonic()
    previous = summary_previous(store, key, identity, user_turns, backend)
    try:
        shaped, incremental = summary_reply_generate(
            slot.name, backend, turns, user_turns, cfg, previous
        )
    except BackendError as exc:
        if isinstance(exc, BackendBadReply):  # a runaway included
            summary_backoff_start(slot.pk)
        return PassOutcome(PassResult.BACKEND_ERROR, type(exc).__name__, note=str(exc))
    duration_ms = int((time.monotonic() - started) * 1000)
    if shaped is None:
        summary_backoff_start(slot.pk)
        return PassOutcome(PassResult.UNUSABLE_REPLY, note="the reply holds no usable summary")

    slot.refresh_from_db()
    if slot.running:
        # The disk guard cannot see a turn that started in memory during the model call.
        return PassOutcome(PassResult.DISCARDED_RUNNING)
    if slot.dirty:
        return PassOutcome(PassResult.DISCARDED_DIRTY)
    payload = StoredSummary(
        intents=shaped.intents,
        constraints=shaped.constraints,
        checks=shaped.checks,
        generated_at=time.time(),
        user_turns=user_turns,
        last_activity=last_activity_ts(turns),
        model=backend.name,
        duration_ms=duration_ms,
        incremental_passes=incremental,
    )
    payload = seal_model(payload)  # last step before storing: the added fields too
    body = payload.model_dump(mode="json")
    if not write_guarded(store, key, INTENTS, body, sig=identity.sig, gen=identity.gen):
        return PassOutcome(PassResult.WRITE_REFUSED)
    gist = one_line_gist(payload)
    line = {"summary": gist, "generated_at": payload.generated_at}
    write_guarded(store, key, ONE_LINE, line, sig=identity.sig, gen=identity.gen)
    _mirror(slot, payload, gist, identity.sig, identity.gen)
    summary_backoff_clear(slot.pk)
    log.info(
        "Session summary stored for %s (%s, %s)",
        slot.name,
        words.counted(len(payload.intents), "intent"),
        words.counted(user_turns, "user turn"),
    )
    return PassOutcome(PassResult.STORED, announce=True)


def _announce(slot_name: str) -> None:
    """``send_robust``: a failing receiver never fails the pass."""
    summary_stored.send_robust(sender=IntentSummary, slot_name=slot_name)


CLEARED = "cleared"  # TOO_FEW_TURNS's detail when the pass removed a summary beyond the turns


def summary_clear_beyond(slot: Slot) -> bool:
    """Remove the stored summary (sidecars, mirrors, turn mark) when it covers turns the
    transcript lost; True when it did."""
    slot.session.refresh_from_db()
    store = get_store()
    summary, _stale = summary_for_panel(store, slot.session.key)
    covers = summary.user_turns if summary is not None else None
    if covers is None or covers <= slot.session.user_turns:
        return False
    for kind in (INTENTS, ONE_LINE):
        sidecar_path(store.root, slot.session.key, kind).unlink(missing_ok=True)
    with transaction.atomic():
        IntentSummary.objects.filter(session_id=slot.session_id).delete()
        OneLineSummary.objects.filter(session_id=slot.session_id).delete()
        summary_turn_mark_set(slot.pk, 0)
    log.info("Session summary of %s removed: it covered turns a rewind removed", slot.name)
    return True


def _current(
    slot: Slot, sidecar: StoredSummary, identity: Identity, user_turns: int
) -> PassOutcome:
    """The stored ``sidecar`` matches ``identity``: nothing to generate. A mirror that does
    not match it (its pass died before the mirror commit, or the database was rebuilt from
    disk) is restored from it, with the push nobody received: the session list reads it."""
    sig, gen = identity.sig, identity.gen
    if IntentSummary.objects.filter(session_id=slot.session_id, sig=sig, gen=gen).exists():
        summary_turn_mark_set(slot.pk, user_turns)
        return PassOutcome(PassResult.CURRENT)
    # Sealed: a sidecar written before extraction redacted user rows may hold a secret.
    payload = seal_model(sidecar.model_copy(update={"user_turns": user_turns}))
    _mirror(slot, payload, one_line_gist(payload), sig, gen)
    return PassOutcome(PassResult.CURRENT, announce=True)


def _read_turns(
    store: TranscriptStore, key: str, identity: Identity, excerpt_chars: int
) -> tuple[list[TranscriptTurn], int]:
    """The turns the pass reads and the session's user turn count: the window when it can
    stand for the session, else the whole session (its folded rows are not kept: the model
    call takes seconds)."""
    bounded = _read_window(store, key, identity, excerpt_chars)
    if bounded is not None:
        return bounded
    turns = extract_turns(store.read_session(key).rows, assistant_excerpt_chars=excerpt_chars)
    return turns, count_user_turns(turns)


def _read_window(
    store: TranscriptStore, key: str, identity: Identity, excerpt_chars: int
) -> tuple[list[TranscriptTurn], int] | None:
    """The last ``WINDOW_BYTES`` of the session, numbered by the mirror's user turn count,
    trusted only from a mirror of exactly this file (the snapshot's sig, gen and size)."""
    mirror = Session.objects.filter(key=key).values_list("sig", "gen", "size", "user_turns").first()
    if mirror is None or tuple(mirror[:3]) != (identity.sig, identity.gen, identity.size):
        return None
    rows = store.read_session_tail(key, identity, WINDOW_BYTES)
    if rows is None:
        return None
    turns = window_turns(rows, mirror[3], assistant_excerpt_chars=excerpt_chars)
    return None if turns is None else (turns, mirror[3])


def one_line_gist(payload: SummaryPayload) -> str:
    """The session list's one-liner: the most recently touched intent and how many are
    open (states are chips beside it)."""
    intents = payload.intents
    if not intents:
        return ""
    gist = intents[0].title
    others = len(intents) - 1
    open_count = sum(1 for i in intents if is_open(i.state))
    if others:
        gist += f" (+{others} more)"
    if open_count:
        gist += f" · {open_count} open"
    return clip_sealed(gist, 400)  # redacted around the cut: no half secret survives it


def _mirror(slot: Slot, payload: StoredSummary, gist: str, sig: int, gen: int) -> None:
    generated_at = dt.datetime.fromtimestamp(payload.generated_at or time.time(), tz=dt.UTC)
    intents = payload.intents
    with transaction.atomic():
        IntentSummary.objects.update_or_create(
            session=slot.session,
            defaults={
                # The payload model's dump: the summary without its envelope.
                "payload": SummaryPayload(
                    intents=intents, constraints=payload.constraints, checks=payload.checks
                ).model_dump(mode="json"),
                "sig": sig,
                "gen": gen,
                "generated_at": generated_at,
                "user_turns": payload.user_turns or 0,
                "last_activity": payload.last_activity or "",
                "model": payload.model or "",
                "duration_ms": payload.duration_ms or 0,
                "intent_count": len(intents),
                "states": ",".join(i.state for i in intents)[:400],
            },
        )
        OneLineSummary.objects.update_or_create(
            session=slot.session,
            defaults={"summary": gist, "sig": sig, "gen": gen, "generated_at": generated_at},
        )
        summary_turn_mark_set(slot.pk, payload.user_turns or 0)


def summary_previous(
    store: TranscriptStore, key: str, identity: Identity, user_turns: int, backend: SummaryBackend
) -> StoredSummary | None:
    """The summary an incremental pass may update, or None for a full pass: one this
    backend wrote for this generation from fewer turns, fewer than
    ``KIROCREW_SUMMARY_FULL_PASS_EVERY - 1`` incremental passes ago. A backend that reads
    the turns, not the prompt (the heuristic), is always full."""
    if not getattr(backend, "reads_prompt", True):
        return None
    data, _ = read_for_panel(store, key)
    if data is None or data.get("gen") != identity.gen:
        return None
    previous = summary_of(data)
    done = previous.incremental_passes
    if (
        previous.model != backend.name
        or not previous.intents
        or done is None
        or done + 1 >= settings.KIROCREW_SUMMARY_FULL_PASS_EVERY
        or not 0 < (previous.user_turns or 0) < user_turns
    ):
        return None
    return previous


def summary_reply_generate(
    slot_name: str,
    backend: SummaryBackend,
    turns: list[TranscriptTurn],
    user_turns: int,
    cfg: SessionSummaryConfig,
    previous: StoredSummary | None,
) -> tuple[SummaryPayload | None, int]:
    """The checked payload and its count of incremental passes. With ``previous`` the
    update prompt goes first; a reply the checks had to correct is thrown away for a full
    pass. A reply is parsed, checked against the transcript's rows and shaped (None:
    unusable); what the checks changed is logged and kept with it."""

    def checked(reply: str, update_of: StoredSummary | None) -> SummaryPayload | None:
        shaped = shape_reply(
            reply,
            turns,
            user_turns=user_turns,
            max_intents=cfg.max_intents,
            max_constraints=cfg.max_constraints,
            previous=update_of,
        )
        if shaped.checks.total():
            log.info("Session summary checks for %s: %s", slot_name, shaped.checks.describe())
        return shaped.payload

    if previous is not None:
        since = previous.user_turns or 0
        reply = backend.generate(build_incremental_prompt(previous, turns, since), turns)
        update = checked(reply, previous)
        if update is None:
            return None, 0  # an unusable reply: a second call would pay again for garbage
        if update.checks is None or not update.checks.total():
            return update, (previous.incremental_passes or 0) + 1
        log.info("Session summary update for %s rejected by the checks: full pass", slot_name)
    return checked(_full_reply(backend, turns, slot_name), None), 0


def _full_reply(backend: SummaryBackend, turns: list[TranscriptTurn], slot_name: str) -> str:
    """The reply to the full-pass prompt, sized to the context window; a server that still
    refuses it as too long is asked again with a shorter one (``OVERFLOW_SHRINKS`` times)."""
    budget = summary_input_budget(backend)
    shrinks = 0
    while True:
        try:
            return backend.generate(build_prompt(turns, budget), turns)
        except BackendContextOverflow:
            smaller = shrunk_budget(budget)
            if smaller is None or shrinks == OVERFLOW_SHRINKS:
                raise
            shrinks += 1
            log.warning(
                "Session summary for %s: the prompt overflowed the model's context window "
                "at %d transcript characters; retrying with %d",
                slot_name,
                budget,
                smaller,
            )
            budget = smaller
