"""The bounded pass (issue 11, item 6): a long session is read from its end only.

Sessions are generated (seeded, property style): user, automation, assistant and tool
rows, resends, blank rows, revisions of earlier rows, rotation into archives. Each is
compared with the whole session's fold + ``extract_turns``, the rule the pass applied to
every session before the window existed.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from summaries import services
from summaries.core.extract import count_user_turns, extract_turns, window_turns
from summaries.core.sidecar import INTENTS, read_strict
from summaries.core.transcript_turn import TranscriptTurn
from summaries.services import PassOutcome, PassResult, summary_generate
from summaries.state import summary_turn_mark_set
from tests.summaries.django.conftest import must
from transcripts.core import storefiles
from transcripts.core.errors import RowNotFound
from transcripts.core.store import TranscriptStore
from transcripts.core.storefiles import read_tail
from transcripts.models import Session
from transcripts.runtime import get_store
from transcripts.services import session_sync

pytestmark = pytest.mark.django_db

EXCERPT = 400


@pytest.fixture
def rotating(offline_home: Path, settings: Any) -> TranscriptStore:
    """The site's store, rotating every ~40 KB so long sessions have archives."""
    settings.TRANSCRIPT_MAX_BYTES = 40_000
    settings.TRANSCRIPT_KEEP_LINES = 20
    return get_store()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Bytes the pass read through each reader: the whole-session readers and the tail."""
    seen = {"whole": 0, "tail": 0}
    real = TranscriptStore.read_session

    def spy(self: TranscriptStore, key: str) -> Any:
        seen["whole"] += sum(p.stat().st_size for p in [*self.archive_paths(key), self.path(key)])
        return real(self, key)

    monkeypatch.setattr(TranscriptStore, "read_session", spy)

    def tail_spy(*args: Any, **kw: Any) -> Any:
        tails = read_tail(*args, **kw)
        seen["tail"] += sum(len(line) + 1 for t in tails for line in t.lines)
        return tails

    monkeypatch.setattr(storefiles, "read_tail", tail_spy)
    return seen


def generate(store: TranscriptStore, key: str, seed: int, rows: int) -> None:
    """A random session of about ``rows`` rows, appended in small batches with revisions."""
    rng = random.Random(seed)
    stamps: list[str] = []
    asks = [f"Please change module {i} so the export keeps its order." for i in range(12)]
    last_user = asks[0]
    first = True
    while len(stamps) < rows:
        batch: list[dict[str, Any]] = []
        for _ in range(rng.randint(1, 6)):
            kind = rng.random()
            if kind < 0.3:
                last_user = (
                    last_user if rng.random() < 0.15 else rng.choice(asks) + " " * rng.randint(0, 2)
                )
                batch.append({"role": "user", "content": last_user})
            elif kind < 0.36:
                batch.append({"role": "user", "content": "[cron notification] nightly build ok"})
            elif kind < 0.4:
                batch.append({"role": "user", "content": "   "})
            elif kind < 0.75:
                text = "Done; the export test passes. " + "detail " * rng.randint(1, 200)
                batch.append({"role": "assistant", "content": text})
            else:
                role = rng.choice(["tool_call", "tool_result"])
                meta = {"tool": "bash", "exit_code": rng.choice([0, 1]), "blob": "x" * 300}
                batch.append({"role": role, "content": "pytest -q\n3 passed", "meta": meta})
        stamps += store.append_rows(key, batch, metadata={"title": "bounded"} if first else None).ts
        first = False
        if stamps and rng.random() < 0.25:
            target = rng.choice(stamps[-30:] if rng.random() < 0.8 else stamps)
            patch: dict[str, Any] = rng.choice(
                [
                    {"content": rng.choice(asks) + " (edited)"},
                    {"content": "[cron notification] superseded"},
                    {"content": ""},
                ]
            )
            with contextlib.suppress(RowNotFound):  # rotated away: revisions stay in a file
                store.append_revision(key, target, patch)
    session_sync(key=key)


def full(store: TranscriptStore, key: str) -> tuple[list[TranscriptTurn], int]:
    turns = extract_turns(store.read_session(key).rows, assistant_excerpt_chars=EXCERPT)
    return turns, count_user_turns(turns)


def bounded(store: TranscriptStore, key: str) -> tuple[list[TranscriptTurn], int]:
    identity = must(store.identity(key))
    return services._read_turns(store, key, identity, EXCERPT)


def unindexed(turns: list[TranscriptTurn]) -> list[TranscriptTurn]:
    return [replace(t, index=0) for t in turns]


@pytest.mark.parametrize("seed", range(12))
def test_under_the_budget_the_pass_reads_exactly_the_full_extraction(rotating, reads, seed):
    key = f"short_{seed}"
    generate(rotating, key, seed, rows=60 + 20 * seed)
    expected = full(rotating, key)
    reads["whole"] = reads["tail"] = 0

    assert bounded(rotating, key) == expected
    assert reads["tail"] == 0  # not even the window: the read of before, byte for byte


@pytest.mark.parametrize("seed", range(12))
def test_a_long_session_is_read_from_its_end_numbered_as_the_whole_session(
    rotating, reads, monkeypatch, seed
):
    key = f"long_{seed}"
    generate(rotating, key, 100 + seed, rows=900)
    whole, total = full(rotating, key)
    budget = 24_000 + 2_000 * seed
    monkeypatch.setattr(services, "WINDOW_BYTES", budget)
    reads["whole"] = reads["tail"] = 0

    turns, counted = bounded(rotating, key)

    assert reads["whole"] == 0
    assert 0 < reads["tail"] <= budget
    assert counted == total
    assert 0 < len(turns) < len(whole)
    # The window is the end of the whole session's turns: same text, same user turn
    # numbers, same resend links (index counts within the window).
    assert unindexed(turns) == unindexed(whole[len(whole) - len(turns) :])
    assert turns[0].user_turn is not None
    assert turns[0].user_turn > 1
    assert [t.index for t in turns] == list(range(1, len(turns) + 1))


def test_the_window_keeps_at_most_the_last_user_turns(rotating, reads, monkeypatch):
    generate(rotating, "many", 7, rows=900)
    whole, total = full(rotating, "many")
    monkeypatch.setattr(services, "window_turns", _capped(window_turns, 5))
    rotating_size = sum(
        p.stat().st_size for p in [*rotating.archive_paths("many"), rotating.path("many")]
    )
    monkeypatch.setattr(services, "WINDOW_BYTES", rotating_size // 2)

    turns, counted = bounded(rotating, "many")

    assert counted == total
    assert [t.user_turn for t in turns if t.user_turn is not None] == list(
        range(total - 4, total + 1)
    )
    assert unindexed(turns) == unindexed(whole[len(whole) - len(turns) :])


def _capped(real: Callable[..., Any], cap: int) -> Callable[..., Any]:
    def call(*args: Any, **kw: Any) -> Any:
        return real(*args, **kw, max_user_turns=cap)

    return call


def test_a_position_hint_in_the_window_reads_the_whole_session(rotating, reads, monkeypatch):
    generate(rotating, "moved", 3, rows=600)
    stamps = [r["ts"] for r in rotating.read_session("moved").rows]
    rotating.append_revision("moved", stamps[-2], {"_after_ts": stamps[-40]})
    session_sync(key="moved")
    monkeypatch.setattr(services, "WINDOW_BYTES", 20_000)
    reads["whole"] = 0

    assert bounded(rotating, "moved") == full(rotating, "moved")
    assert reads["whole"] > 0


def test_a_mirror_of_another_state_reads_the_whole_session(rotating, reads, monkeypatch):
    generate(rotating, "drift", 4, rows=600)
    Session.objects.filter(key="drift").update(user_turns=3)  # and stale: an old sig
    Session.objects.filter(key="drift").update(sig=1)
    monkeypatch.setattr(services, "WINDOW_BYTES", 20_000)
    reads["whole"] = 0

    assert bounded(rotating, "drift") == full(rotating, "drift")
    assert reads["whole"] > 0


def test_a_generating_pass_on_a_long_session_reads_at_most_the_window(
    enabled_summaries, make_slot, store, backend, reads, monkeypatch
):
    """Through ``summary_generate``: no whole-session reader, the window's bytes only, and
    the model sees the last user turn under its whole-session number."""
    slot = make_slot(turns=2)
    key = slot.session.key
    generate(store, key, 42, rows=1500)
    _, total = full(store, key)
    monkeypatch.setattr(services, "WINDOW_BYTES", 30_000)
    summary_turn_mark_set(slot.pk, 0)
    reads["whole"] = reads["tail"] = 0

    assert summary_generate(slot_name="s1", force=True) == PassOutcome(PassResult.STORED)

    assert reads["whole"] == 0
    assert 0 < reads["tail"] <= 30_000
    assert f"USER (turn {total})" in backend.prompts[-1]
    assert "USER (turn 1)" not in backend.prompts[-1]
    assert must(read_strict(store, key, INTENTS))["user_turns"] == total
